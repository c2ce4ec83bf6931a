//! The engine's modules form a layered graph: no two modules use each other, directly or
//! through others. A loop means two concerns are one, or a fact lives in the wrong place.
//!
//! Read from the source: every `crate::module` path outside comments (in `use` items, in
//! code, in nested `use crate::{a, b::c}` groups) is an edge from the file's top-level module
//! (`plan/retention.rs` is part of `plan`). Doc links are documentation, not uses.

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

fn identifier_at(text: &str) -> String {
    text.chars()
        .skip_while(|c| c.is_whitespace())
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The top-level modules named by `crate::` paths in `code`.
fn used_modules(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::b, c, d::{e, f}}`: the first identifier of each top-level item.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        used.insert(identifier_at(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            used.insert(identifier_at(rest));
        }
    }
    used.retain(|m| !m.is_empty());
    used
}

fn module_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue; // the crate root only declares and re-exports
        }
        let uses = used_modules(&code(&fs::read_to_string(&file).unwrap()));
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(uses.into_iter().filter(|m| *m != module));
    }
    graph
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

#[test]
fn no_two_modules_use_each_other() {
    let graph = module_graph();
    assert!(graph.len() > 15, "read the modules: {graph:?}");
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
fn the_reader_finds_every_kind_of_use() {
    let text =
        "use crate::a::B;\nuse crate::{b, c::D, e::{f, g}};\n// crate::comment\nfn x() { crate::h::i(); }";
    let used = used_modules(&code(text));
    assert_eq!(used, ["a", "b", "c", "e", "h"].map(String::from).into());
    let mut graph = Graph::new();
    graph.insert("p".into(), ["q".to_string()].into());
    graph.insert("q".into(), ["r".to_string()].into());
    graph.insert("r".into(), ["p".to_string()].into());
    assert_eq!(find_loop(&graph).unwrap(), ["p", "q", "r", "p"]);
    graph.get_mut("r").unwrap().clear();
    assert_eq!(find_loop(&graph), None);
}
