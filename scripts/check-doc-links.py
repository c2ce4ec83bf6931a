#!/usr/bin/env python3
"""Docs that stay true: every link, repository path and `cargo test` command the docs quote resolves.

    scripts/check-doc-links.py              # exit 1 and one `file:line: problem` per failure
    scripts/check-doc-links.py --self-test  # plants stale statements and checks each is caught

What it reads: every Markdown file of the repository (README.md, docs/, events/, examples/, any
crate's README), every comment of every `.rs` file (`//!`, `///` and `//`, also after code),
and the `#` comments of the scripts and manifests (`.sh`, `.py`, `.toml`, `.yaml`, `.ci/run`).
What it checks there:

1. Markdown links (outside fenced blocks): a relative link names a file that exists and, with a
   `#anchor`, a heading GitHub turns into that anchor.
2. Repository paths: each word of a backticked span (and, outside code blocks, also a bare
   word) that starts with an existing top-level entry of the repository (`crates/`, `tests/`,
   `docs/`, `scripts/`, `events/`, `examples/`, `.ci/`, `template.yaml`, `Cargo.toml`, ...)
   must exist, from the repository's root or, in a file inside a package, from that package's
   folder (so `tests/engine/main.rs` in a doc comment of `crates/core` is that crate's). A
   backticked `src/...` or `tests/...` in a package resolves against the package. A backticked
   `dir/name.rs` that starts elsewhere (`run/apply.rs`, `plan/verdict.rs`) must be the end of
   some file's path, and a lone `name.rs` some file's name. Words with a scheme (`s3://`),
   globs or placeholders (`*`, `{`, `$`, `<`, `...`, `crates/BINARY`), units (`events/s`), what
   is installed or built (`node_modules`, `target`) and Cargo's conventions named in general
   (`src/main.rs`) are not paths; `path:LINE` and `path#anchor` are checked without the suffix.
   In Markdown, a `tests/...` or `src/...` also resolves against the last package folder
   (`crates/lambda`) backticked in the same paragraph.
3. `cargo test` commands, quoted in backticks or in ```sh/```console/```bash blocks (starting
   the span or line, after `$ ` or `VAR=value`), or in a comment's prose followed by an
   option: `-p NAME` is a workspace member (`cargo metadata --no-deps`); `--test NAME`,
   `--bin NAME`, `--example NAME`, `--lib` are targets of that package (without `-p`: of some
   default member, or any member with `--workspace`); and each filter (the positional word
   before `--`, or the words after it that are not harness options) is found in the selected
   targets' sources. "Found" is a plain text search: each `::`-separated segment of the filter
   must be part of a `fn NAME`, `mod NAME` or a source file's name in the target's source tree
   (the folder of its `main.rs`/`lib.rs`, or its file plus the folder of the same name).
   Placeholders (`FILTER`, `NAME`, `<...>`) are skipped.
4. The crates table of `docs/architecture.md` (rows `| `crates/X` | what | may depend on |`):
   each crate's architectural edges are named in its row, read from its `Cargo.toml`
   `[dependencies]`: every crate of ours (by package name, or as the row calls it: "the
   engine", "the glue", "the app crate", "the stack crate", "the SDK adapters") and every AWS
   crate (`aws-*`, `aws_*`). A row that says "anything" (test support) is not checked.
"""
import json
import tomllib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"target", "node_modules", ".local", ".git"}
LINK = re.compile(r"\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`]+)`")
CHECKED = {"files": 0, "paths": 0, "cargo test commands": 0, "crate dependencies": 0}
SHELL_FENCES = {"sh", "bash", "shell", "console", "text", ""}
HARNESS_OPTIONS_WITH_VALUE = {"--test-threads", "--skip", "--format", "--color", "-Z", "--logfile"}
CARGO_OPTIONS_WITH_VALUE = {"--features", "-F", "--target", "--profile", "--manifest-path", "-j",
                            "--jobs", "--color", "--config", "--target-dir", "--exclude"}


def walk(root):
    """Every file of the repository, without build output, installed packages or git's own."""
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIP)
        for name in sorted(names):
            yield Path(folder) / name


def files(suffix):
    return [path for path in walk(ROOT) if path.suffix == suffix]


# ---------------------------------------------------------------- where the text is


def markdown_lines(text):
    """(line number, text, fence language or None) of a Markdown file."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = None if fence is not None else stripped[3:].strip().lower()
            continue
        yield number, line, fence


def comment_of(line):
    """The comment part of a line of Rust: after a `//` that is outside a string literal."""
    in_string, escaped, i = False, False, 0
    while i < len(line) - 1:
        c = line[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"' and not (i > 0 and line[i - 1] == "'" and line[i + 1 : i + 2] == "'"):
            in_string = True
        elif line.startswith("//", i):
            return line[i:].lstrip("/!").strip()
        i += 1
    return None


def rust_comment_lines(text):
    """(line number, comment text, fence language or None) of a Rust file's comments."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        comment = comment_of(line)
        if comment is None:
            continue
        if comment.startswith("```"):
            fence = None if fence is not None else (comment[3:].strip().lower() or "rust")
            continue
        yield number, comment, fence


def hash_comment_lines(text):
    """(line number, comment text, None) of a shell, Python, TOML or YAML file's `#` comments."""
    for number, line in enumerate(text.splitlines(), 1):
        match = re.search(r"(?:^|\s)#(?!!)(.*)", line)
        if match:
            yield number, match.group(1).strip(), None


HASH_COMMENTED = {".sh", ".py", ".toml", ".yaml", ".yml"}


# ---------------------------------------------------------------- the workspace


class Workspace:
    def __init__(self, root):
        self.root = root
        meta = json.loads(subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            cwd=root, check=True, capture_output=True, text=True).stdout)
        self.packages = {p["name"]: p for p in meta["packages"]}
        defaults = set(meta.get("workspace_default_members") or meta["workspace_members"])
        self.defaults = [p for p in meta["packages"] if p["id"] in defaults]
        self.package_dirs = sorted(
            (Path(p["manifest_path"]).parent for p in meta["packages"]), key=lambda d: -len(d.parts))
        self.top_level = {entry.name for entry in root.iterdir() if entry.name not in SKIP}
        self.all_files = [p.relative_to(root).as_posix() for p in walk(root)]
        self._names = {}
        self._packages = {}

    def package_dir(self, path):
        """The folder of the package `path` is in (None outside every package)."""
        if path not in self._packages:
            inside = [d for d in self.package_dirs if d != self.root and path.is_relative_to(d)]
            self._packages[path] = inside[0] if inside else None
        return self._packages[path]

    def names_in(self, target):
        """Every `fn`, `mod` and source file name in a target's source tree."""
        src = Path(target["src_path"])
        if src in self._names:
            return self._names[src]
        sources = [src]
        if src.name in ("main.rs", "lib.rs", "mod.rs"):
            sources = list(src.parent.rglob("*.rs"))
        elif (src.parent / src.stem).is_dir():
            sources += list((src.parent / src.stem).rglob("*.rs"))
        names = set()
        for source in sources:
            names.add(source.stem)
            names.update(re.findall(r"\b(?:fn|mod)\s+(?:r#)?(\w+)", source.read_text()))
        self._names[src] = names
        return names


# ---------------------------------------------------------------- repository paths

PATH_WORD = re.compile(r"^[\w.\-/]+$")
# Cargo's default layout, named in general (a package's `src/main.rs`), not one file.
CARGO_CONVENTIONS = {"src/main.rs", "src/lib.rs", "Cargo.toml", "tests/", "examples/", "benches/"}


def path_words(text):
    for word in text.split():
        word = word.lstrip("\"'(").rstrip("\"'(),;.:!?")
        word = re.sub(r":\d+(-\d+)?$", "", word).split("#")[0]
        if not word or not PATH_WORD.match(word) or "//" in word or ".." in word:
            continue
        segments = [s for s in word.split("/") if s]
        if any(re.fullmatch(r"[A-Z][A-Z_]+", s) for s in segments):
            continue  # a placeholder: crates/BINARY
        if len(segments) == 2 and len(segments[1]) == 1 and not word.endswith("/"):
            continue  # a unit: events/s
        if SKIP.intersection(segments):
            continue  # installed or built, not part of the repository
        yield word


def check_path(ws, source, word, backticked, context=None):
    """None when `word` is not a repository path or exists; otherwise the problem.

    `context` is the package folder a Markdown paragraph is about (its last backticked
    `crates/NAME`), against which a `tests/...` or `src/...` there also resolves."""
    first = word.split("/")[0]
    package = ws.package_dir(source) or context
    candidates = []
    if word in CARGO_CONVENTIONS:
        return None
    if first in ws.top_level and ("/" in word or "." in first):
        candidates.append(ws.root / word)
        if package is not None:
            candidates.append(package / word)
    elif backticked and package is not None and first in ("src", "tests", "examples", "benches"):
        if "/" not in word:
            return None
        candidates.append(package / word)
    elif backticked and "/" in word and re.search(r"\.(rs|md|sh|py|toml|yaml|json)$", word):
        CHECKED["paths"] += 1
        if any(f == word or f.endswith("/" + word) for f in ws.all_files):
            return None
        return f"`{word}`: no file of the repository ends with this path"
    elif backticked and re.fullmatch(r"\w+\.rs", word):
        CHECKED["paths"] += 1
        if any(f.endswith("/" + word) for f in ws.all_files):
            return None
        return f"`{word}`: no Rust file of that name"
    else:
        return None
    if source.suffix == ".md":
        candidates.append(source.parent / word)
    CHECKED["paths"] += 1
    if any(c.exists() for c in candidates):
        return None
    return f"`{word}`: no such file or folder"


# ---------------------------------------------------------------- cargo test commands

PLACEHOLDER = re.compile(r"^([A-Z_]+|.*[<>{}\[\]$].*|\.\.\.)$")


def cargo_test_commands(text, quoted):
    """The argument lists of every `cargo test` in a line (up to a shell separator). `quoted`:
    text that is a command (a backticked span, a line of a shell block), where the command
    starts the text or follows a shell separator (after `$ ` and `VAR=value` words); in prose
    `cargo test` counts only when an option follows it ("`cargo test -p ...`")."""
    start = r"(?:^|[|;&(]\s*)(?:\$\s+)?(?:\w+=\S*\s+)*" if quoted else r"\b"
    for match in re.finditer(start + r"cargo\s+(?:\+\S+\s+)?test\b([^`|;&#)]*)", text.strip()):
        args = match.group(1).split()
        if quoted or (args and args[0].startswith("-")):
            yield args


def check_cargo_test(ws, args):
    """The problems of one `cargo test ARGS` command (an empty list when it is right)."""
    packages, kinds, filters, workspace = [], [], [], False
    i, after_dashes = 0, False
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if after_dashes:
            if arg in HARNESS_OPTIONS_WITH_VALUE:
                i += 1
            elif not arg.startswith("-"):
                filters.append(arg)
        elif arg == "--":
            after_dashes = True
        elif arg in ("-p", "--package"):
            packages.append(value)
            i += 1
        elif arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            packages.append(arg[2:])
        elif arg.startswith("--package="):
            packages.append(arg.split("=", 1)[1])
        elif arg in ("--test", "--bin", "--example"):
            kinds.append((arg[2:], value))
            i += 1
        elif arg == "--lib" or arg == "--doc":
            kinds.append(("lib", None))
        elif arg in ("--workspace", "--all"):
            workspace = True
        elif arg in CARGO_OPTIONS_WITH_VALUE:
            i += 1
        elif not arg.startswith("-"):
            filters.append(arg)
        i += 1

    problems = []
    if any(p is None or PLACEHOLDER.match(p) for p in packages):
        return problems
    chosen = []
    for name in packages:
        if name in ws.packages:
            chosen.append(ws.packages[name])
        else:
            problems.append(f"-p {name}: not a package of the workspace")
    if problems:
        return problems
    if not chosen:
        chosen = list(ws.packages.values()) if workspace else ws.defaults

    targets = []
    for kind, name in kinds:
        if name is not None and PLACEHOLDER.match(name):
            return problems
        found = [t for p in chosen for t in p["targets"]
                 if kind in t["kind"] and (name is None or t["name"] == name)]
        if not found:
            where = ", ".join(p["name"] for p in chosen) if packages else "any default member"
            label = f"--{kind} {name}" if name else f"--{kind}"
            problems.append(f"{label}: no such target in {where}")
        targets += found
    if problems:
        return problems
    if not kinds:
        targets = [t for p in chosen for t in p["targets"]
                   if set(t["kind"]) & {"lib", "test", "bin", "proc-macro"}]

    for text in filters:
        if PLACEHOLDER.match(text):
            continue
        names = set().union(*(ws.names_in(t) for t in targets)) if targets else set()
        segments = [s for s in text.split("::") if s]
        if not all(any(s in n for n in names) for s in segments):
            which = ", ".join(sorted({t["name"] for t in targets})) or "no target"
            problems.append(f"filter `{text}` matches no test or module in {which}")
    return problems


# ---------------------------------------------------------------- Markdown links


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen, result = {}, set()
    for _, line, fence in markdown_lines(path.read_text()):
        match = re.match(r"#{1,6}\s+(.*)", line)
        if fence is not None or not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def check_link(path, target):
    if re.match(r"[a-z]+:", target):
        return None
    file_part, _, anchor = target.partition("#")
    dest = (path.parent / file_part).resolve() if file_part else path
    if not dest.exists():
        return f"link {target}: no such file"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"link {target}: no heading with that anchor"
    return None


# ---------------------------------------------------------------- one file


def check_file(ws, path, text=None):
    """The problems of one file (`text`: its contents, when it is not on disk)."""
    problems = []
    is_markdown = path.suffix == ".md"
    if is_markdown:
        lines = markdown_lines
    elif path.suffix == ".rs":
        lines = rust_comment_lines
    else:
        lines = hash_comment_lines
    context = None  # the package a Markdown paragraph is about
    for number, line, fence in lines(path.read_text() if text is None else text):
        found = []
        in_code = fence is not None
        if is_markdown and not in_code:
            found += [check_link(path, t) for t in LINK.findall(line)]
        if not line.strip():
            context = None
        spans = SPAN.findall(line) if not in_code else []
        for span in spans:
            for word in path_words(span):
                found.append(check_path(ws, path, word, backticked=True, context=context))
                folder = ws.root / word.rstrip("/")
                if is_markdown and folder in ws.package_dirs:
                    context = folder
        if not in_code or (is_markdown and fence in ("", "text")):
            bare = LINK.sub(" ", SPAN.sub(" ", line))
            found += [check_path(ws, path, w, backticked=False) for w in path_words(bare)]
        commands = []
        if in_code and fence in SHELL_FENCES:
            commands += cargo_test_commands(line, quoted=True)
        elif not in_code:
            for span in spans:
                commands += cargo_test_commands(span, quoted=True)
            if not is_markdown:
                commands += cargo_test_commands(SPAN.sub(" ", line), quoted=False)
        CHECKED["cargo test commands"] += len(commands)
        for args in commands:
            found += [f"`cargo test {' '.join(args)}`: {p}" for p in check_cargo_test(ws, args)]
        rel = path.relative_to(ws.root).as_posix()
        problems += [f"{rel}:{number}: {p}" for p in found if p]
    return problems


def check_all(ws):
    problems = []
    scripts = [p for p in walk(ROOT) if p.suffix in HASH_COMMENTED or p.relative_to(ROOT).as_posix() == ".ci/run"]
    # Not this file: its planted stale statements are there on purpose.
    scripts = [p for p in scripts if p != Path(__file__).resolve()]
    for path in files(".md") + files(".rs") + scripts:
        CHECKED["files"] += 1
        problems += check_file(ws, path)
    architecture = ROOT / ARCHITECTURE
    problems += check_crate_table(ROOT, ARCHITECTURE, architecture.read_text())
    return problems


# ---------------------------------------------------------------- the crates table

ARCHITECTURE = "docs/architecture.md"
# How the crates table may call a crate of ours besides its package name.
OUR_CRATE_WORDS = {
    "ddb-rollover": ["the engine"],
    "ddb-rollover-lambda": ["the glue"],
    "ddb-rollover-app": ["the app crate"],
    "ddb-rollover-stack": ["the stack crate"],
    "ddb-rollover-aws": ["the SDK adapters"],
}
ROW = re.compile(r"^\| ((?:`[^`]+`(?: \([^)]*\))?,? ?)+) \|(.*)\|(.*)\|\s*$")


def named(dependency, text):
    """Whether `text` names `dependency` as a word (or one of its words for a crate of ours)."""
    words = [dependency] + OUR_CRATE_WORDS.get(dependency, [])
    return any(re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", text) for w in words)


def check_crate_table(root, source, text):
    """Problem lines for the architecture's crates table in `text` (read as `source`)."""
    problems = []
    packages = set()
    for manifest in list(root.glob("crates/*/Cargo.toml")) + list(root.glob("examples/*/Cargo.toml")):
        packages.add(tomllib.loads(manifest.read_text())["package"]["name"])
    for number, line in enumerate(text.splitlines(), 1):
        row = ROW.match(line)
        if not row or "anything" in row.group(3):
            continue
        for folder in re.findall(r"`((?:crates|examples)/[^`]+)`", row.group(1)):
            manifest = root / folder / "Cargo.toml"
            if not manifest.exists():
                continue
            dependencies = tomllib.loads(manifest.read_text()).get("dependencies", {})
            for dependency in dependencies:
                architectural = dependency in packages or dependency.startswith(("aws-", "aws_"))
                if not architectural:
                    continue
                CHECKED["crate dependencies"] += 1
                if not named(dependency, row.group(3)):
                    problems.append(f"{source}:{number}: `{folder}` depends on {dependency} "
                                    f"({folder}/Cargo.toml), which its row does not name")
    return problems


# ---------------------------------------------------------------- self-test

PLANTED = """\
# Planted

Good: `crates/core/tests/engine/module_graph.rs`, `scripts/test.sh`, `docs/policy.md`,
`run/apply.rs`, `s3://bucket/key`, `ts_2026-10-25`, `cargo test -p ddb-rollover --test engine planner`,
`events/s`, `crates/BINARY`, `src/main.rs`, `crates/lambda`: `tests/init_error.rs`; the docs' cargo test commands.
Stale path: `crates/core/tests/module_graph.rs`.
Stale file name: `plan/verdicts.rs`.
Unknown package: `cargo test -p no-such-crate`.
Unknown target: `cargo test -p ddb-rollover --test handler`.
Unmatched filter: `cargo test -p ddb-rollover --test engine no_test_is_called_this`.

```sh
cargo test -p ddb-rollover-lambda --test init_error -- no_such_test_either
```
"""
PLANTED_RS = """\
//! Good: `src/lib.rs`, `cargo test -p ddb-rollover --lib`.
//! See tests/against_moto.rs for the rest. These cargo test commands are prose.
//! Gone: the end to end test (crates/lambda/tests/handler.rs).
fn main() { let url = "http://x//y"; } // crates/lambda/tests/handler.rs
"""
# A crates table whose CLI row forgets a crate of ours (the SDK adapters) and an AWS crate (aws-config).
PLANTED_TABLE = """\
| crate | what it is | may depend on |
|---|---|---|
| `crates/core` (`ddb-rollover`) | the engine | chrono, governor |
| `crates/cli` (`ddb-rollover-cli`) | the binary | the engine, the app crate, clap, aws-sdk-applicationautoscaling, aws-sdk-dynamodb, aws-sdk-eventbridge |
| `crates/testkit`, `crates/deploy-checks` | test support | anything |
"""
# (file, a word of the planted line, what the report must say about that line)
PLANTED_SH = """\
#!/usr/bin/env bash
# Good: scripts/test.sh, `docs/testing.md`. Stale: crates/core/tests/indexes.rs
echo "#not/a/comment"
"""
EXPECTED = [
    ("planted.md", "Stale path", "crates/core/tests/module_graph.rs"),
    ("planted.md", "Stale file name", "plan/verdicts.rs"),
    ("planted.md", "Unknown package", "-p no-such-crate: not a package"),
    ("planted.md", "Unknown target", "--test handler: no such target"),
    ("planted.md", "Unmatched filter", "filter `no_test_is_called_this`"),
    ("planted.md", "no_such_test_either", "filter `no_such_test_either`"),
    ("crates/core/planted.rs", "against_moto", "tests/against_moto.rs"),
    ("crates/core/planted.rs", "handler.rs)", "crates/lambda/tests/handler.rs"),
    ("crates/core/planted.rs", "fn main", "crates/lambda/tests/handler.rs"),
    ("scripts/planted.sh", "Stale", "crates/core/tests/indexes.rs"),
    ("docs/architecture.md", "`crates/cli`", "depends on ddb-rollover-aws"),
    ("docs/architecture.md", "`crates/cli`", "depends on aws-config"),
]


def expected_lines():
    """EXPECTED as (`file:line:` prefix, message)."""
    texts = {"planted.md": PLANTED, "crates/core/planted.rs": PLANTED_RS, "scripts/planted.sh": PLANTED_SH,
             "docs/architecture.md": PLANTED_TABLE}
    for file, marker, message in EXPECTED:
        number = next(n for n, line in enumerate(texts[file].splitlines(), 1) if marker in line)
        yield f"{file}:{number}:", message


def self_test(ws):
    """The planted files are checked as if they were at those paths; nothing is written."""
    problems = check_file(ws, ws.root / "planted.md", PLANTED)
    problems += check_file(ws, ws.root / "crates/core/planted.rs", PLANTED_RS)
    problems += check_file(ws, ws.root / "scripts/planted.sh", PLANTED_SH)
    problems += check_crate_table(ws.root, ARCHITECTURE, PLANTED_TABLE)
    for line in problems:
        print(line)
    expected = list(expected_lines())
    missing = [e for e in expected if not any(p.startswith(e[0]) and e[1] in p for p in problems)]
    extra = [p for p in problems if not any(p.startswith(e[0]) and e[1] in p for e in expected)]
    for where, what in missing:
        print(f"self-test: NOT CAUGHT {where} {what}")
    for line in extra:
        print(f"self-test: FALSE ALARM {line}")
    print(f"self-test: {len(EXPECTED) - len(missing)}/{len(EXPECTED)} planted failures caught, "
          f"{len(extra)} false alarms")
    return 1 if missing or extra else 0


def main():
    ws = Workspace(ROOT)
    if "--self-test" in sys.argv[1:]:
        return self_test(ws)
    problems = check_all(ws)
    for line in problems:
        print(line)
    counts = ", ".join(f"{n} {what}" for what, n in CHECKED.items())
    print(f"docs: {len(problems)} stale links, paths or cargo test commands ({counts} checked)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
