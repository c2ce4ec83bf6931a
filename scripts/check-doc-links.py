#!/usr/bin/env python3
"""Every relative link in the project's Markdown resolves: the file exists and, with a
`#anchor`, the target has a heading that GitHub turns into that anchor.

    scripts/check-doc-links.py        # exit 1 and one line per broken link
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"target", "node_modules", ".local", ".git"}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def markdown_files():
    for path in sorted(ROOT.rglob("*.md")):
        if not SKIP.intersection(path.relative_to(ROOT).parts):
            yield path


def prose(text):
    """The text outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen, result = {}, set()
    for line in prose(path.read_text()):
        match = re.match(r"#{1,6}\s+(.*)", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def main():
    broken = []
    for path in markdown_files():
        for line in prose(path.read_text()):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path
                where = f"{path.relative_to(ROOT)}: {target}"
                if not dest.exists():
                    broken.append(f"{where}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{where}: no heading with that anchor")
    for line in broken:
        print(line)
    print(f"doc links: {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
