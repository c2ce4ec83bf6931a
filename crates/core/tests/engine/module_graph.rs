//! No two modules of the workspace use each other, directly or through others: a loop means two
//! concerns are one, or a fact lives in the wrong place. And the engine's layers: its folders,
//! in the order the crate root lists them, each using only the ones before it.
//!
//! Read from the source of every module tree of the workspace (each crate's `src/`, each
//! example's, each test target that is a folder). Outside comments and string literals, a path
//! is an edge from the file's module to the longest module it names: `crate::a::b` from the
//! root, `super::a` from the parent, `self::a` and a child's name (`proxy::Proxy` in the file
//! that declares `mod proxy`) from the module itself; `crate::policy::period::Slot` is
//! `policy::period`. A path naming no module (an item of the root) is an edge to the root,
//! `crate`. Re-exports (`pub use`, `pub(crate) use`) are a module's façade, not uses: the
//! module's own code does not need what it re-exports. Doc links are documentation.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The root module's name in a graph.
const ROOT: &str = "crate";

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (`//` to the end of the line) and without the
/// contents of its string and character literals.
fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&chars, i) {
            // A raw string: r"…" or r#"…"#, ended by the quote and as many hashes.
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += hashes + 2;
            while i < chars.len()
                && !(chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|c| *c == '#'))
            {
                i += 1;
            }
            i += hashes + 1;
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: '\'' or '\n' or '\u{…}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && is_ident(chars[i - 1])
}

/// The path at the start of `text`: `a::b::C` (identifiers joined by `::`).
fn path_at(text: &str) -> String {
    let mut path = Vec::new();
    let mut rest = text.trim_start();
    loop {
        let ident: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if ident.is_empty() {
            break;
        }
        rest = &rest[ident.len()..];
        path.push(ident);
        match rest.strip_prefix("::") {
            Some(next) if !next.starts_with('{') => rest = next,
            _ => break,
        }
    }
    path.join("::")
}

/// The paths that follow `start::` in `code` (where `start` is a whole word, not the tail of
/// a longer path), each with `start::` itself left off; a group `start::{a::b, c}` gives each
/// of its top-level items.
fn paths_after(code: &str, start: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let opener = format!("{start}::");
    for (at, _) in code.match_indices(&opener) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[at + opener.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        used.insert(path_at(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            used.insert(path_at(rest));
        }
    }
    used.retain(|m| !m.is_empty() && m != "self");
    used
}

/// A module's code without its façade: every `pub use …;` and `pub(crate) use …;` left out.
fn without_reexports(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = ["pub use ", "pub(crate) use "]
        .iter()
        .filter_map(|opener| rest.find(opener))
        .min()
    {
        out.push_str(&rest[..at]);
        rest = rest[at..].split_once(';').map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    out
}

/// The module a source file is: `policy/period.rs` is `policy::period`, `plan/mod.rs` is
/// `plan`, the root file (`lib.rs`, `main.rs`) is [`ROOT`].
fn module_of(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts == ["lib"] || parts == ["main"] || parts.is_empty() {
        return ROOT.into();
    }
    parts.join("::")
}

/// The parent of `module`: `a::b` is `a`'s child, `a` the root's.
fn parent_of(module: &str) -> &str {
    match module.rsplit_once("::") {
        Some((parent, _)) => parent,
        None if module == ROOT => ROOT,
        None => ROOT,
    }
}

/// `path` below `base` as an absolute module path (no `crate::` prefix for the root).
fn join(base: &str, path: &str) -> String {
    if base == ROOT {
        path.to_string()
    } else {
        format!("{base}::{path}")
    }
}

/// The longest of `modules` that `path` starts with; the root when none does.
fn owner_of(path: &str, modules: &BTreeSet<String>) -> String {
    modules
        .iter()
        .filter(|m| path == m.as_str() || path.starts_with(&format!("{m}::")))
        .max_by_key(|m| m.len())
        .cloned()
        .unwrap_or_else(|| ROOT.into())
}

/// The modules `module` (whose code is `code`) uses among `modules`.
fn uses_of(module: &str, code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut absolute: BTreeSet<String> = paths_after(code, "crate");
    for path in paths_after(code, "super") {
        // `super::super::x` climbs twice.
        let mut base = parent_of(module);
        let mut rest = path.as_str();
        while let Some(higher) = rest.strip_prefix("super::") {
            base = parent_of(base);
            rest = higher;
        }
        absolute.insert(join(base, rest));
    }
    for path in paths_after(code, "self") {
        absolute.insert(join(module, &path));
    }
    for child in modules
        .iter()
        .filter(|m| parent_of(m) == module && m.as_str() != module)
    {
        let name = child.rsplit("::").next().unwrap();
        for path in paths_after(code, name) {
            absolute.insert(join(module, &format!("{name}::{path}")));
        }
        // `child::{}`-free uses such as `use proxy;` are not counted: they name no item.
    }
    absolute
        .iter()
        .map(|path| owner_of(path, modules))
        .filter(|m| m != module)
        .collect()
}

/// Every module of the tree rooted at `dir`, and the modules it uses.
fn module_graph(dir: &Path) -> Graph {
    let mut files = Vec::new();
    source_files(dir, &mut files);
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|file| {
            let module = module_of(file.strip_prefix(dir).unwrap());
            let code = code(&fs::read_to_string(file).unwrap());
            let code = without_reexports(&code);
            (module, code)
        })
        .collect();
    let modules: BTreeSet<String> = sources.iter().map(|(m, _)| m.clone()).collect();
    sources
        .iter()
        .map(|(module, code)| (module.clone(), uses_of(module, code, &modules)))
        .collect()
}

/// Every module tree of the workspace: each crate's and example's `src/`, the system tests'
/// `tests/`, and each test target that is a folder with a `main.rs`.
fn module_trees() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut trees = vec![workspace.join("tests")];
    for group in ["crates", "examples"] {
        for member in fs::read_dir(workspace.join(group)).unwrap() {
            let member = member.unwrap().path();
            trees.push(member.join("src"));
            let Ok(targets) = fs::read_dir(member.join("tests")) else {
                continue;
            };
            trees.extend(
                targets
                    .map(|t| t.unwrap().path())
                    .filter(|t| t.join("main.rs").is_file()),
            );
        }
    }
    trees.retain(|t| t.is_dir());
    trees
}

/// A loop in `graph`, as the path that closes it, if there is one.
fn find_loop(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The engine's modules without its root (which only declares and re-exports).
fn engine_graph() -> Graph {
    let mut graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    graph.remove(ROOT);
    for uses in graph.values_mut() {
        uses.remove(ROOT);
    }
    graph
}

/// The graph between folders (each module's first path segment).
fn folder_graph(graph: &Graph) -> Graph {
    let folder = |m: &str| m.split("::").next().unwrap().to_string();
    let mut folders = Graph::new();
    for (module, uses) in graph {
        let edges = folders.entry(folder(module)).or_default();
        edges.extend(uses.iter().map(|u| folder(u)).filter(|f| *f != folder(module)));
    }
    folders
}

/// The layers as the crate root's doc lists them, lowest first; `route` is the applications'
/// entry beside them.
const LAYERS: [&str; 5] = ["policy", "table", "ledger", "plan", "run"];

#[test]
fn no_two_modules_of_the_workspace_use_each_other() {
    let trees = module_trees();
    assert!(trees.len() >= 12, "read the module trees: {trees:?}");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let mut loops = Vec::new();
    let mut modules = 0;
    for tree in &trees {
        let mut graph = module_graph(tree);
        modules += graph.len();
        // Every loop of the tree: cut each found loop's closing edge and look again.
        while let Some(cycle) = find_loop(&graph) {
            let shown = tree.canonicalize().unwrap();
            let shown = shown.strip_prefix(&workspace).unwrap_or(&shown);
            loops.push(format!("{}: {}", shown.display(), cycle.join(" -> ")));
            let (from, to) = (&cycle[cycle.len() - 2], &cycle[cycle.len() - 1]);
            graph.get_mut(from).unwrap().remove(to);
        }
    }
    assert!(modules > 150, "read the modules: {modules}");
    assert!(
        loops.is_empty(),
        "modules that use each other in a loop:\n{}",
        loops.join("\n")
    );
}

#[test]
fn the_engine_in_layers() {
    let graph = engine_graph();
    assert!(graph.len() > 25, "read the modules: {graph:?}");
    // Print the layers, lowest first: what each module may be read without.
    let mut placed: BTreeMap<&str, usize> = BTreeMap::new();
    while placed.len() < graph.len() {
        let before = placed.len();
        for (module, uses) in &graph {
            if placed.contains_key(module.as_str()) {
                continue;
            }
            let layers: Option<Vec<usize>> = uses.iter().map(|u| placed.get(u.as_str()).copied()).collect();
            if let Some(layers) = layers {
                placed.insert(module, layers.into_iter().max().map_or(0, |l| l + 1));
            }
        }
        assert!(placed.len() > before, "a loop among {graph:?}");
    }
    for layer in 0..=placed.values().copied().max().unwrap_or(0) {
        let modules: Vec<&str> = placed
            .iter()
            .filter(|(_, l)| **l == layer)
            .map(|(m, _)| *m)
            .collect();
        println!("layer {layer}: {}", modules.join(", "));
    }
}

#[test]
fn each_folder_uses_only_the_layers_before_it() {
    let folders = folder_graph(&engine_graph());
    let mut expected: BTreeSet<String> = LAYERS.iter().map(|l| l.to_string()).collect();
    expected.insert("route".into());
    assert_eq!(
        folders.keys().cloned().collect::<BTreeSet<_>>(),
        expected,
        "the crate's folders"
    );
    let rank = |f: &str| LAYERS.iter().position(|l| *l == f);
    for (folder, uses) in &folders {
        for used in uses {
            let fine = match (rank(folder), rank(used)) {
                (Some(a), Some(b)) => b < a,
                // The applications' routing reads the policy only.
                (None, Some(b)) => folder == "route" && LAYERS[b] == "policy",
                _ => false,
            };
            assert!(
                fine,
                "{folder} uses {used}: the layers are {LAYERS:?}, each using only the ones before it"
            );
        }
        println!(
            "{folder} uses {}",
            uses.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
}

#[test]
fn the_reader_finds_every_kind_of_use() {
    let text = "use crate::a::B;\nuse crate::{b, c::D, e::{f, g}};\n// crate::comment\n\
                fn x() { crate::h::i(); let s = \"crate::in_a_string\"; }";
    assert_eq!(
        paths_after(&code(text), "crate"),
        ["a::B", "b", "c::D", "e", "h::i"].map(String::from).into()
    );
    let modules: BTreeSet<String> = [ROOT, "a", "h", "h::i", "h::j", "k"].map(String::from).into();
    assert_eq!(owner_of("a::B", &modules), "a");
    assert_eq!(owner_of("h::i", &modules), "h::i");
    assert_eq!(owner_of("ab::C", &modules), ROOT, "an item of the root");
    // `super::` from a child, a child's name from its parent, `self::`, not a longer path's tail.
    let uses = uses_of(
        "h::i",
        &code("use super::j::X; fn f() { other::h::k(); }"),
        &modules,
    );
    assert_eq!(uses, BTreeSet::from(["h::j".to_string()]));
    let uses = uses_of("h", &code("use i::Y; use self::j::Z;"), &modules);
    assert_eq!(uses, ["h::i", "h::j"].map(String::from).into());
    let uses = uses_of(
        ROOT,
        &without_reexports(&code("pub use a::B;\nuse k::C;")),
        &modules,
    );
    assert_eq!(
        uses,
        BTreeSet::from(["k".to_string()]),
        "the root's façade is no use"
    );
    assert_eq!(module_of(Path::new("plan/mod.rs")), "plan");
    assert_eq!(module_of(Path::new("policy/period.rs")), "policy::period");
    assert_eq!(module_of(Path::new("lib.rs")), ROOT);
    assert_eq!(
        code("let c = '\"'; r#\"crate::x\"#; crate::y"),
        "let c = ; \"\"; crate::y"
    );
    let mut graph = Graph::new();
    graph.insert("p".into(), ["q".to_string()].into());
    graph.insert("q".into(), ["r".to_string()].into());
    graph.insert("r".into(), ["p".to_string()].into());
    assert_eq!(find_loop(&graph).unwrap(), ["p", "q", "r", "p"]);
    graph.get_mut("r").unwrap().clear();
    assert_eq!(find_loop(&graph), None);
    let mut modules = Graph::new();
    modules.insert("plan::verdict".into(), ["policy::naming".to_string()].into());
    modules.insert("policy::naming".into(), BTreeSet::new());
    assert_eq!(
        folder_graph(&modules).get("plan").unwrap(),
        &BTreeSet::from(["policy".to_string()])
    );
}
