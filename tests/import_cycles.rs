//! No import loop between the modules of any crate of the workspace.
//!
//! The test reads the Rust sources of every workspace member (the `members` of the root
//! `Cargo.toml`), gives each file its module path (`foo.rs` and `foo/mod.rs` are `foo`,
//! `lib.rs` and `main.rs` the crate root) and finds the paths its code names through `crate::`,
//! `super::` and `self::`, in `use` declarations (grouped ones included) and in expressions
//! alike; a `use` may also start with a child module's own name, as `mod.rs` files write
//! `pub use write::Committed`. A name a module imports is followed to where it comes from, so
//! `super::DecisionLog` re-exported by the parent counts as the sibling that defines it.
//!
//! A path from a file under module `a` to something under its sibling `b` (two modules with
//! the same parent) is an edge `a -> b`. So the top-level folders and files of a crate's `src/`
//! form one graph, the files and subfolders of every folder another. A strongly connected
//! component of more than one sibling is an import loop. The loops in [`KNOWN_LOOPS`] are still
//! to be opened; any other loop fails the test, and so does an entry of the list that no longer
//! loops, so that the list only shrinks.
//!
//! Test code may reach anywhere: a file's `#[cfg(test)] mod tests` (the last item of a file, by
//! the project's convention: the test fails on code after it) and the modules declared under
//! `#[cfg(test)]` are not read.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::ops::Bound;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Import loops that exist today and are still to be opened: each entry is the sorted names of
/// the siblings of one strongly connected component (a folder's name ends in `/`). Remove an
/// entry when its loop is opened; never add one: a new loop is opened before it is merged.
const KNOWN_LOOPS: &[&[&str]] = &[];

/// A module path within its crate: the names from the crate root down, empty for the root.
type ModulePath = Vec<String>;

/// One source file: where it is, its module path within its crate, and its code.
struct SourceFile {
    /// The file's path from the workspace root, for messages.
    shown: String,
    /// The file's module path within its crate.
    module: ModulePath,
    /// The code with comments and literals blanked and the test module at its end dropped.
    code: String,
}

/// One leaf of a `use` tree: its whole path and the name it binds (none for a glob).
#[derive(Debug, PartialEq)]
struct UseLeaf {
    path: Vec<String>,
    binds: Option<String>,
}

/// A path a file names, as written.
#[derive(Debug, PartialEq)]
struct Named {
    /// The line it is on, from 1.
    line: usize,
    /// The inline modules (`mod code { ... }`) it sits in, outermost first.
    scope: Vec<String>,
    /// Its segments, `$crate` written `crate`.
    segments: Vec<String>,
    /// The name a `use` at the top level of the file binds it to; such names are what the
    /// module re-exports to, or shares with, other modules.
    binds: Option<String>,
}

/// A reference from one sibling module to another.
#[derive(Debug, PartialEq)]
struct Edge {
    from: String,
    to: String,
    /// The `file:line` that names the target.
    at: String,
}

/// `source` with comments, string and character literals blanked to spaces (newlines kept),
/// so that the paths found are code and line numbers stay true.
fn blank_comments_and_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                let pair = (chars[i], chars.get(i + 1).copied());
                if pair == ('/', Some('*')) {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if pair == ('*', Some('/')) {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_hashes(&chars, i) {
            // `r`, the hashes and the opening quote, then up to a quote followed by as many hashes.
            let open = i + 2 + hashes;
            out.extend(chars[i..open].iter().map(|&c| blank(c)));
            i = open;
            while i < chars.len() {
                let closes =
                    chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k).copied() == Some('#'));
                if closes {
                    out.extend(std::iter::repeat_n(' ', hashes + 1));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                for &c in chars.iter().skip(i).take(step) {
                    out.push(blank(c));
                }
                i += step;
            }
            if i < chars.len() {
                out.push(' ');
                i += 1;
            }
        } else if c == '\'' && next == Some('\\') {
            // An escaped character literal: `'\n'`, `'\''`, `'\u{1F600}'`.
            let end = (i + 3..chars.len())
                .find(|&k| chars[k] == '\'')
                .unwrap_or(chars.len() - 1);
            out.extend(std::iter::repeat_n(' ', end + 1 - i));
            i = end + 1;
        } else if c == '\'' && chars.get(i + 2).copied() == Some('\'') {
            out.push_str("   ");
            i += 3;
        } else {
            // Code, a lifetime or a label included.
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string literal (`r"..."`, `br#"..."#`) starting at `i`, if one does.
fn raw_string_hashes(chars: &[char], i: usize) -> Option<usize> {
    let is_word = |k: usize| chars[k].is_alphanumeric() || chars[k] == '_';
    // The `r` may follow a `b` or `c` prefix, but no other part of a word (`for r in`, `bar#`).
    let prefixed = i > 0 && matches!(chars[i - 1], 'b' | 'c') && (i < 2 || !is_word(i - 2));
    if chars[i] != 'r' || (i > 0 && is_word(i - 1) && !prefixed) {
        return None;
    }
    let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
    (chars.get(i + 1 + hashes).copied() == Some('"')).then_some(hashes)
}

/// The lines of `code` with their byte offsets.
fn lines_with_offsets(code: &str) -> impl Iterator<Item = (usize, &str)> {
    code.split_inclusive('\n').scan(0, |offset, line| {
        let start = *offset;
        *offset += line.len();
        Some((start, line))
    })
}

/// The item that follows a `#[cfg(test)]` line at `offset`: the next non-blank line, trimmed.
fn item_after(code: &str, offset: usize) -> &str {
    code[offset..]
        .lines()
        .skip(1)
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
}

/// Whether `line` is an attribute that compiles what follows for tests only: `#[cfg(test)]` or
/// `#[cfg(all(test, unix))]`, but not `#[cfg(any(test, feature = "testing"))]`, which ships.
fn is_test_only(line: &str) -> bool {
    let line = line.trim();
    line == "#[cfg(test)]" || (line.starts_with("#[cfg(all(test,") && line.ends_with(")]"))
}

/// Where the test-only attribute of `code`'s inline `mod tests { ... }` starts, if it has one.
fn test_module_start(code: &str) -> Option<usize> {
    let tests = Regex::new(r"^(pub(\([a-z]+\))?\s+)?mod\s+tests\s*\{").expect("valid pattern");
    lines_with_offsets(code)
        .find(|&(offset, line)| is_test_only(line) && tests.is_match(item_after(code, offset)))
        .map(|(offset, _)| offset)
}

/// The offset of the `}` that closes the block opened by the first `{` at or after `from`.
fn block_end(code: &str, from: usize) -> Option<usize> {
    let open = from + code[from..].find('{')?;
    let mut depth = 0usize;
    code[open..].char_indices().find_map(|(k, c)| {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            _ => return None,
        }
        (depth == 0).then_some(open + k)
    })
}

/// The modules `code` declares as test-only (`#[cfg(test)] mod test_support;`).
fn test_only_modules(code: &str) -> Vec<String> {
    let declared = Regex::new(r"^(pub(\([a-z]+\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;")
        .expect("valid pattern");
    lines_with_offsets(code)
        .filter(|&(_, line)| is_test_only(line))
        .filter_map(|(offset, _)| declared.captures(item_after(code, offset)))
        .map(|captures| captures[3].to_string())
        .collect()
}

/// A source file ready to be read for paths.
fn source_file(shown: String, module: ModulePath, source: &str) -> SourceFile {
    let mut code = blank_comments_and_literals(source);
    if let Some(start) = test_module_start(&code) {
        let after = block_end(&code, start).map_or("", |end| &code[end + 1..]);
        assert!(
            after.trim().is_empty(),
            "{shown}: code follows its `#[cfg(test)] mod tests` block, which must be the file's \
             last item: this test reads a file only up to it"
        );
        code.truncate(start);
    }
    SourceFile {
        shown,
        module,
        code,
    }
}

/// The tokens of a `use` tree: names, `::`, braces, commas and globs.
fn use_tokens(tree: &str) -> Vec<String> {
    let token = Regex::new(r"::|[{},*]|\$?[A-Za-z_][A-Za-z0-9_]*").expect("valid pattern");
    token
        .find_iter(tree)
        .map(|m| m.as_str().trim_start_matches('$').to_string())
        .collect()
}

/// The leaves of a `use` tree (the text between `use` and `;`).
fn parse_use_tree(tree: &str) -> Vec<UseLeaf> {
    let tokens = use_tokens(tree);
    let mut leaves = Vec::new();
    let mut at = 0;
    // A leading `::` names an extern crate; the empty segment keeps it out of every crate.
    let prefix = if tokens.first().map(String::as_str) == Some("::") {
        at = 1;
        vec![String::new()]
    } else {
        Vec::new()
    };
    use_subtree(&tokens, &mut at, prefix, &mut leaves);
    leaves
}

/// Parses one subtree at `tokens[*at]` below `path`, adding its leaves to `leaves`.
fn use_subtree(
    tokens: &[String],
    at: &mut usize,
    mut path: Vec<String>,
    leaves: &mut Vec<UseLeaf>,
) {
    while let Some(token) = tokens.get(*at) {
        match token.as_str() {
            "{" => {
                *at += 1;
                while let Some(token) = tokens.get(*at) {
                    match token.as_str() {
                        "}" => break,
                        "," => *at += 1,
                        _ => use_subtree(tokens, at, path.clone(), leaves),
                    }
                }
                *at += 1;
                return;
            }
            "*" => {
                *at += 1;
                leaves.push(UseLeaf { path, binds: None });
                return;
            }
            // A stray `::` is skipped; a `}` or `,` ends the subtree for the group to handle.
            "::" => *at += 1,
            "}" | "," => return,
            name => {
                path.push(name.to_string());
                *at += 1;
                if tokens.get(*at).map(String::as_str) == Some("::") {
                    *at += 1;
                    continue;
                }
                let alias = if tokens.get(*at).map(String::as_str) == Some("as") {
                    *at += 2;
                    tokens.get(*at - 1).cloned()
                } else {
                    None
                };
                if path.last().map(String::as_str) == Some("self") {
                    path.pop();
                }
                let binds = alias.or_else(|| path.last().cloned());
                let binds = binds.filter(|name| name != "_");
                leaves.push(UseLeaf { path, binds });
                return;
            }
        }
    }
}

/// The span of each inline module of `code` (`mod code { ... }`): its name and byte range.
fn inline_modules(code: &str) -> Vec<(String, usize, usize)> {
    let opening = Regex::new(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{").expect("valid pattern");
    opening
        .captures_iter(code)
        .filter_map(|captures| {
            let whole = captures.get(0)?;
            let close = block_end(code, whole.end() - 1)?;
            Some((captures[1].to_string(), whole.start(), close))
        })
        .collect()
}

/// Every path `code` names through `crate::`, `super::` or `self::`, and every leaf of its
/// `use` declarations.
fn named_paths(code: &str) -> Vec<Named> {
    let line_of = |offset: usize| code[..offset].matches('\n').count() + 1;
    let modules = inline_modules(code);
    let scope_of = |offset: usize| -> Vec<String> {
        modules
            .iter()
            .filter(|(_, start, end)| (*start..*end).contains(&offset))
            .map(|(name, _, _)| name.clone())
            .collect()
    };
    let depth_at = |offset: usize| {
        let opened = code[..offset].matches('{').count();
        let closed = code[..offset].matches('}').count();
        opened.saturating_sub(closed)
    };
    let mut named = Vec::new();
    let mut rest = code.to_string();
    let declaration = Regex::new(r"\buse\s+([^;]*);").expect("valid pattern");
    for captures in declaration.captures_iter(code) {
        let Some(whole) = captures.get(0) else {
            continue;
        };
        let top_level = depth_at(whole.start()) == 0;
        for leaf in parse_use_tree(&captures[1]) {
            named.push(Named {
                line: line_of(whole.start()),
                scope: scope_of(whole.start()),
                segments: leaf.path,
                binds: leaf.binds.filter(|_| top_level),
            });
        }
        // Blank the declaration so that the expression paths below do not count it again.
        let blanked: String = whole
            .as_str()
            .bytes()
            .map(|b| if b == b'\n' { '\n' } else { ' ' })
            .collect();
        rest.replace_range(whole.range(), &blanked);
    }
    let expression = Regex::new(r"\b(crate|super|self)\b((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
        .expect("valid pattern");
    for captures in expression.captures_iter(&rest) {
        let Some(whole) = captures.get(0) else {
            continue;
        };
        let mut segments = vec![captures[1].to_string()];
        segments.extend(
            captures[2]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from),
        );
        named.push(Named {
            line: line_of(whole.start()),
            scope: scope_of(whole.start()),
            segments,
            binds: None,
        });
    }
    named.sort_by_key(|n| n.line);
    named
}

/// The modules of one crate and what the names each module imports at its top level point to.
struct CrateModules {
    modules: BTreeSet<ModulePath>,
    imports: HashMap<ModulePath, HashMap<String, Vec<String>>>,
}

impl CrateModules {
    /// The path from the crate root that `segments` names from module `scope`, or `None` for a
    /// path into another crate. `imported` also lets a path start with a name `scope` imports.
    fn absolute(
        &self,
        scope: &[String],
        segments: &[String],
        imported: bool,
    ) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let mut path: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => scope.to_vec(),
            "super" => scope.split_last()?.1.to_vec(),
            name => {
                let mut child = scope.to_vec();
                child.push(name.to_string());
                if self.modules.contains(&child) {
                    child
                } else if imported {
                    self.imports.get(scope)?.get(name)?.clone()
                } else {
                    return None;
                }
            }
        };
        for segment in rest {
            if segment == "super" {
                path.pop()?;
            } else {
                path.push(segment.clone());
            }
        }
        Some(path)
    }

    /// The module `path` ends in: its longest prefix that is a module, after following the names
    /// modules import (`crate::service::DecisionLog` ends in `service::play::decision_log`).
    fn target_module(&self, mut path: Vec<String>) -> ModulePath {
        for _ in 0..16 {
            let known = (0..=path.len())
                .rev()
                .find(|&n| self.modules.contains(&path[..n]))
                .unwrap_or(0);
            let imported = path
                .get(known)
                .and_then(|name| self.imports.get(&path[..known])?.get(name))
                .filter(|target| target[..] != path[..=known]);
            match imported {
                Some(target) => {
                    let mut followed = target.clone();
                    followed.extend_from_slice(&path[known + 1..]);
                    path = followed;
                }
                None => {
                    path.truncate(known);
                    return path;
                }
            }
        }
        path
    }

    /// The name of module `module` of the crate in `src`: a folder ends in `/`.
    fn node_name(&self, src: &str, module: &[String]) -> String {
        // A module's descendants come right after it in the sorted set.
        let has_children = self
            .modules
            .range((Bound::Excluded(module.to_vec()), Bound::Unbounded))
            .next()
            .is_some_and(|next| next.starts_with(module));
        let path = module.join("/");
        if has_children {
            format!("{src}/{path}/")
        } else {
            format!("{src}/{path}.rs")
        }
    }
}

/// The edges between sibling modules that the files of the crate in `src` make.
fn crate_edges(src: &str, files: &[SourceFile]) -> Vec<Edge> {
    let test_only: Vec<ModulePath> = files
        .iter()
        .flat_map(|file| {
            test_only_modules(&file.code).into_iter().map(|name| {
                let mut module = file.module.clone();
                module.push(name);
                module
            })
        })
        .collect();
    let files: Vec<&SourceFile> = files
        .iter()
        .filter(|file| {
            !test_only
                .iter()
                .any(|module| file.module.starts_with(module))
        })
        .collect();
    let named: Vec<Vec<Named>> = files.iter().map(|file| named_paths(&file.code)).collect();
    let mut krate = CrateModules {
        modules: files.iter().map(|file| file.module.clone()).collect(),
        imports: HashMap::new(),
    };
    krate.modules.insert(Vec::new());
    let mut imports: HashMap<ModulePath, HashMap<String, Vec<String>>> = HashMap::new();
    for (file, named) in files.iter().zip(&named) {
        for path in named {
            let Some(name) = &path.binds else { continue };
            if let Some(target) = krate.absolute(&file.module, &path.segments, false) {
                imports
                    .entry(file.module.clone())
                    .or_default()
                    .insert(name.clone(), target);
            }
        }
    }
    krate.imports = imports;
    let mut edges = Vec::new();
    for (file, named) in files.iter().zip(&named) {
        for path in named {
            let mut scope = file.module.clone();
            scope.extend(path.scope.iter().cloned());
            let Some(absolute) = krate.absolute(&scope, &path.segments, path.scope.is_empty())
            else {
                continue;
            };
            let target = krate.target_module(absolute);
            let common = file
                .module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if file.module.len() > common && target.len() > common {
                edges.push(Edge {
                    from: krate.node_name(src, &file.module[..=common]),
                    to: krate.node_name(src, &target[..=common]),
                    at: format!("{}:{}", file.shown, path.line),
                });
            }
        }
    }
    edges
}

/// The module path of the file at `relative` (from its crate's `src/`).
fn module_path(relative: &Path) -> ModulePath {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    match file.as_str() {
        "mod.rs" => {}
        "lib.rs" | "main.rs" if parts.is_empty() => {}
        _ => parts.push(file.trim_end_matches(".rs").to_string()),
    }
    parts
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The source folders of the workspace's members, from the root `Cargo.toml`.
fn crate_sources(root: &Path) -> Vec<String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("the root Cargo.toml");
    let members = Regex::new(r"members\s*=\s*\[([^\]]*)\]").expect("valid pattern");
    let quoted = Regex::new(r#""([^"]+)""#).expect("valid pattern");
    let list = members
        .captures(&manifest)
        .expect("a members list in the root Cargo.toml");
    quoted
        .captures_iter(&list[1])
        .map(|member| match &member[1] {
            "." => "src".to_string(),
            path => format!("{path}/src"),
        })
        .collect()
}

/// The edges between sibling modules in every crate of the workspace.
fn workspace_edges() -> Vec<Edge> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut edges = Vec::new();
    for src in crate_sources(root) {
        let dir = root.join(&src);
        let files: Vec<SourceFile> = rust_files(&dir)
            .iter()
            .map(|path| {
                let source = fs::read_to_string(path).expect("a readable source file");
                let relative = path.strip_prefix(&dir).expect("a file under its crate");
                source_file(
                    format!("{src}/{}", relative.display()),
                    module_path(relative),
                    &source,
                )
            })
            .collect();
        assert!(
            files.iter().any(|file| file.module.is_empty()),
            "{src} has no lib.rs or main.rs: is it still where the workspace says?"
        );
        edges.extend(crate_edges(&src, &files));
    }
    edges
}

/// Tarjan's strongly connected components: the state of one search.
struct Tarjan<'g> {
    graph: &'g BTreeMap<String, BTreeSet<String>>,
    index: HashMap<&'g str, usize>,
    low: HashMap<&'g str, usize>,
    stack: Vec<&'g str>,
    on_stack: HashSet<&'g str>,
    components: Vec<Vec<String>>,
}

impl<'g> Tarjan<'g> {
    /// Visits `node` and everything it reaches that is not visited yet.
    fn visit(&mut self, node: &'g str) {
        let index = self.index.len();
        self.index.insert(node, index);
        self.low.insert(node, index);
        self.stack.push(node);
        self.on_stack.insert(node);
        let graph = self.graph;
        for next in graph.get(node).into_iter().flatten() {
            let next = next.as_str();
            let reached = match self.index.get(next) {
                None => {
                    self.visit(next);
                    self.low[next]
                }
                Some(&index) if self.on_stack.contains(next) => index,
                Some(_) => continue,
            };
            let low = self.low[node].min(reached);
            self.low.insert(node, low);
        }
        if self.low[node] == self.index[node] {
            let mut component = Vec::new();
            while let Some(top) = self.stack.pop() {
                self.on_stack.remove(top);
                component.push(top.to_string());
                if top == node {
                    break;
                }
            }
            component.sort();
            self.components.push(component);
        }
    }
}

/// The strongly connected components of `graph` (node to the nodes it points to), each sorted.
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&str> = graph
        .iter()
        .flat_map(|(node, next)| std::iter::once(node).chain(next))
        .map(String::as_str)
        .collect();
    let mut search = Tarjan {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: HashSet::new(),
        components: Vec::new(),
    };
    for node in nodes {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.components
}

/// The import loops among `edges`: the components of more than one module, sorted.
fn import_loops(edges: &[Edge]) -> BTreeSet<Vec<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for edge in edges {
        graph
            .entry(edge.from.clone())
            .or_default()
            .insert(edge.to.clone());
    }
    strongly_connected(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .collect()
}

/// The edges inside one loop, each with the places that make it.
fn describe_loop(component: &[String], edges: &[Edge]) -> String {
    let mut places: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for edge in edges {
        if component.contains(&edge.from) && component.contains(&edge.to) {
            places
                .entry((edge.from.as_str(), edge.to.as_str()))
                .or_default()
                .push(edge.at.as_str());
        }
    }
    let mut text = format!("  [{}]\n", component.join(", "));
    for ((from, to), mut at) in places {
        at.dedup();
        let more = match at.len() {
            0..=3 => String::new(),
            n => format!(" and {} more", n - 3),
        };
        let shown: Vec<&str> = at.into_iter().take(3).collect();
        text.push_str(&format!("    {from} -> {to}: {}{more}\n", shown.join(", ")));
    }
    text
}

#[test]
fn no_import_loop_but_the_known_ones_and_every_known_one_still_loops() {
    let edges = workspace_edges();
    let found = import_loops(&edges);
    let known: BTreeSet<Vec<String>> = KNOWN_LOOPS
        .iter()
        .map(|names| names.iter().map(|name| name.to_string()).collect())
        .collect();
    let mut report = String::new();
    let new: Vec<&Vec<String>> = found.difference(&known).collect();
    if !new.is_empty() {
        report.push_str("New import loops (open them: one side must stop naming the other):\n");
        for component in new {
            report.push_str(&describe_loop(component, &edges));
        }
    }
    let opened: Vec<&Vec<String>> = known.difference(&found).collect();
    if !opened.is_empty() {
        report.push_str("Loops in KNOWN_LOOPS that no longer exist (remove them from the list):\n");
        for component in opened {
            report.push_str(&format!("  [{}]\n", component.join(", ")));
        }
    }
    assert!(report.is_empty(), "{report}");
}

#[test]
fn every_known_loop_is_a_sorted_set_of_modules_listed_once() {
    let mut seen = BTreeSet::new();
    for names in KNOWN_LOOPS {
        assert!(names.len() > 1, "{names:?} is not a loop");
        assert!(
            names.windows(2).all(|pair| pair[0] < pair[1]),
            "{names:?} is not sorted"
        );
        assert!(seen.insert(*names), "{names:?} is listed twice");
    }
}

/// The parser, the path resolution and the component finder on small made-up crates.
mod parts {
    use super::*;

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    fn leaf(path: &[&str], binds: Option<&str>) -> UseLeaf {
        UseLeaf {
            path: strings(path),
            binds: binds.map(String::from),
        }
    }

    /// A crate in `src` of the files `(relative path, source)`.
    fn made_up_crate(files: &[(&str, &str)]) -> Vec<SourceFile> {
        files
            .iter()
            .map(|(path, source)| {
                source_file(format!("src/{path}"), module_path(Path::new(path)), source)
            })
            .collect()
    }

    fn edge_pairs(edges: &[Edge]) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = edges
            .iter()
            .map(|e| (e.from.clone(), e.to.clone()))
            .collect();
        pairs.sort();
        pairs.dedup();
        pairs
    }

    #[test]
    fn a_grouped_import_names_every_leaf() {
        let leaves = parse_use_tree("crate::{a::b, c::{d, e as f, self}, g::*, h::{i::_j as _}}");
        assert_eq!(
            leaves,
            vec![
                leaf(&["crate", "a", "b"], Some("b")),
                leaf(&["crate", "c", "d"], Some("d")),
                leaf(&["crate", "c", "e"], Some("f")),
                leaf(&["crate", "c"], Some("c")),
                leaf(&["crate", "g"], None),
                leaf(&["crate", "h", "i", "_j"], None),
            ]
        );
    }

    #[test]
    fn super_and_self_resolve_from_the_file_module() {
        let krate = CrateModules {
            modules: [
                vec![],
                strings(&["store"]),
                strings(&["store", "redis"]),
                strings(&["store", "redis", "bus"]),
            ]
            .into_iter()
            .collect(),
            imports: HashMap::new(),
        };
        let bus = strings(&["store", "redis", "bus"]);
        assert_eq!(
            krate.absolute(&bus, &strings(&["super", "conn", "Pool"]), true),
            Some(strings(&["store", "redis", "conn", "Pool"]))
        );
        assert_eq!(
            krate.absolute(&bus, &strings(&["super", "super", "codec"]), true),
            Some(strings(&["store", "codec"]))
        );
        let redis = strings(&["store", "redis"]);
        assert_eq!(
            krate.absolute(&redis, &strings(&["self", "bus", "Bus"]), true),
            Some(strings(&["store", "redis", "bus", "Bus"]))
        );
        assert_eq!(
            krate.absolute(&redis, &strings(&["serde", "Deserialize"]), true),
            None
        );
        assert_eq!(
            krate.target_module(strings(&["store", "redis", "bus", "Bus"])),
            bus
        );
    }

    #[test]
    fn paths_in_expressions_count_and_those_in_comments_strings_and_tests_do_not() {
        let file = source_file(
            "src/a.rs".into(),
            strings(&["a"]),
            "//! See [`crate::docs`].\nfn f() -> char {\n    let _ = \"crate::quoted\";\n    \
             crate::b::run(r#\"super::raw\"#);\n    '{'\n}\n/* crate::block */\n\
             #[cfg(test)]\nmod tests {\n    use crate::c::helper;\n}\n",
        );
        let named = named_paths(&file.code);
        assert_eq!(
            named,
            vec![Named {
                line: 4,
                scope: vec![],
                segments: strings(&["crate", "b", "run"]),
                binds: None,
            }]
        );
    }

    #[test]
    fn only_test_only_attributes_hide_code() {
        assert!(is_test_only("#[cfg(test)]"));
        assert!(is_test_only("  #[cfg(all(test, unix))]"));
        assert!(!is_test_only("#[cfg(any(test, feature = \"testing\"))]"));
        assert!(!is_test_only("#[cfg(not(test))]"));
        let file = source_file(
            "src/a.rs".into(),
            strings(&["a"]),
            "fn f() {}\n#[cfg(all(test, unix))]\nmod tests {\n    use crate::b::C;\n}\n",
        );
        assert!(named_paths(&file.code).is_empty(), "{}", file.code);
    }

    #[test]
    #[should_panic(expected = "src/a.rs: code follows its `#[cfg(test)] mod tests` block")]
    fn code_after_the_test_module_is_refused_rather_than_skipped() {
        source_file(
            "src/a.rs".into(),
            strings(&["a"]),
            "#[cfg(test)]\nmod tests {\n    fn t() { let _ = '}'; }\n}\n\nuse crate::b::C;\n",
        );
    }

    #[test]
    fn a_name_the_parent_re_exports_leads_to_its_sibling_and_test_modules_are_not_read() {
        let files = made_up_crate(&[
            ("lib.rs", "mod auth;\n"),
            (
                "auth/mod.rs",
                "mod keys;\nmod callers;\npub use keys::AuthService;\n#[cfg(test)]\nmod test_support;\n",
            ),
            ("auth/keys.rs", "pub struct AuthService;\n"),
            ("auth/callers.rs", "use super::AuthService;\n"),
            ("auth/test_support.rs", "use super::{callers, keys};\n"),
        ]);
        let edges = crate_edges("src", &files);
        assert_eq!(
            edge_pairs(&edges),
            vec![("src/auth/callers.rs".into(), "src/auth/keys.rs".into())]
        );
        assert_eq!(edges[0].at, "src/auth/callers.rs:1");
    }

    #[test]
    fn a_three_node_cycle_is_one_component() {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")] {
            graph.entry(from.into()).or_default().insert(to.into());
        }
        let mut components = strongly_connected(&graph);
        components.sort();
        assert_eq!(
            components,
            vec![strings(&["a", "b", "c"]), strings(&["d"]), strings(&["e"])]
        );
    }

    #[test]
    fn a_loop_between_folders_and_one_between_files_are_found() {
        let files = made_up_crate(&[
            ("lib.rs", "mod http;\nmod service;\nmod state;\n"),
            ("http/mod.rs", "mod games;\n"),
            (
                "http/games.rs",
                "use crate::{service::games::create, state::AppState};\n",
            ),
            ("service/mod.rs", "mod games;\nmod approvals;\n"),
            (
                "service/games.rs",
                "pub fn create() { super::approvals::check() }\n",
            ),
            (
                "service/approvals.rs",
                "use super::games;\npub fn check() {}\n",
            ),
            (
                "state.rs",
                "pub struct AppState(crate::http::games::Router);\n",
            ),
        ]);
        let edges = crate_edges("src", &files);
        let loops: Vec<Vec<String>> = import_loops(&edges).into_iter().collect();
        assert_eq!(
            loops,
            vec![
                strings(&["src/http/", "src/state.rs"]),
                strings(&["src/service/approvals.rs", "src/service/games.rs"]),
            ]
        );
        let described = describe_loop(&loops[0], &edges);
        assert!(
            described.contains("src/state.rs -> src/http/: src/state.rs:1"),
            "{described}"
        );
    }

    #[test]
    fn module_paths_follow_the_file_layout() {
        assert_eq!(module_path(Path::new("lib.rs")), Vec::<String>::new());
        assert_eq!(module_path(Path::new("main.rs")), Vec::<String>::new());
        assert_eq!(module_path(Path::new("store/mod.rs")), strings(&["store"]));
        assert_eq!(
            module_path(Path::new("store/redis.rs")),
            strings(&["store", "redis"])
        );
        assert_eq!(
            module_path(Path::new("store/redis/bus.rs")),
            strings(&["store", "redis", "bus"])
        );
    }
}
