//! The engine's layers: its folders, in the order the crate root lists them, each using only
//! the ones before it; and inside the folders, no two modules use each other, directly or
//! through others. A loop means two concerns are one, or a fact lives in the wrong place.
//!
//! Read from the source: every `crate::` path outside comments (in `use` items, in code, in
//! nested `use crate::{a, b::c}` groups) is an edge from the file's module to the longest
//! module the path names (`crate::policy::period::Slot` is `policy::period`). A folder's
//! private parts (the planner's `plan/indexes.rs`, reached through `super::`) belong to it.
//! Doc links are documentation, not uses.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

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

/// The code of a file without its comments (`//`, `///`, `//!` to the end of the line).
fn code(text: &str) -> String {
    text.lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The path at the start of `text`: `a::b::C` (identifiers joined by `::`).
fn path_at(text: &str) -> String {
    let mut path = Vec::new();
    let mut rest = text.trim_start();
    loop {
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
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

/// The paths named after `crate::` in `code`.
fn used_paths(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::b, c, d::{e, f}}`: the path of each top-level item.
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
    used.retain(|m| !m.is_empty());
    used
}

/// The module a source file is: `policy/period.rs` is `policy::period`, `plan/mod.rs` is
/// `plan`.
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
    parts.join("::")
}

/// The longest of `modules` that `path` starts with.
fn owner_of<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    modules
        .iter()
        .filter(|m| path == m.as_str() || path.starts_with(&format!("{m}::")))
        .max_by_key(|m| m.len())
}

/// Every module of the crate and the modules it uses.
fn module_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|file| {
            let module = module_of(file.strip_prefix(&src).unwrap());
            (module, code(&fs::read_to_string(file).unwrap()))
        })
        .filter(|(module, _)| module != "lib") // the crate root only declares and re-exports
        .collect();
    let modules: BTreeSet<String> = sources.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = Graph::new();
    for (module, code) in sources {
        let uses: BTreeSet<String> = used_paths(&code)
            .iter()
            .filter_map(|path| owner_of(path, &modules).cloned())
            .collect();
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(uses.into_iter().filter(|m| *m != module));
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
const LAYERS: [&str; 5] = ["policy", "table", "plan", "run", "aws"];

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

#[test]
fn no_two_modules_use_each_other() {
    let graph = module_graph();
    assert!(graph.len() > 25, "read the modules: {graph:?}");
    if let Some(cycle) = find_loop(&graph) {
        panic!("modules use each other in a loop: {}", cycle.join(" -> "));
    }
    // Print the layers, lowest first: what each module may be read without.
    let mut placed: BTreeMap<&str, usize> = BTreeMap::new();
    while placed.len() < graph.len() {
        for (module, uses) in &graph {
            if placed.contains_key(module.as_str()) {
                continue;
            }
            let layers: Option<Vec<usize>> = uses.iter().map(|u| placed.get(u.as_str()).copied()).collect();
            if let Some(layers) = layers {
                placed.insert(module, layers.into_iter().max().map_or(0, |l| l + 1));
            }
        }
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
    let folders = folder_graph(&module_graph());
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
    let text =
        "use crate::a::B;\nuse crate::{b, c::D, e::{f, g}};\n// crate::comment\nfn x() { crate::h::i(); }";
    let used = used_paths(&code(text));
    assert_eq!(used, ["a::B", "b", "c::D", "e", "h::i"].map(String::from).into());
    let modules: BTreeSet<String> = ["a", "h", "h::i"].map(String::from).into();
    assert_eq!(owner_of("a::B", &modules).unwrap(), "a");
    assert_eq!(owner_of("h::i", &modules).unwrap(), "h::i");
    assert_eq!(owner_of("ab::C", &modules), None);
    assert_eq!(module_of(Path::new("plan/mod.rs")), "plan");
    assert_eq!(module_of(Path::new("policy/period.rs")), "policy::period");
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
