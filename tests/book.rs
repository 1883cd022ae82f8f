//! The guide (`docs/`, an mdBook) cannot rot: every Rust block in it is
//! included from a file that CI compiles, every error it quotes is a
//! compile-fail case's, and every page is in its summary.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every page of the book's source, with its text.
fn pages() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("docs/src"), &mut out);
    out.sort();
    out
}

/// The fenced blocks of `text`: (info string, body).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some((_, body)), None) => {
                body.push_str(trimmed);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a block is left open");
    out
}

/// `{{#include PATH}}`, `{{#include PATH:anchor}}` or `{{#include PATH:from:to}}`.
fn include(line: &str) -> Option<(String, Option<String>)> {
    let inner = line.trim().strip_prefix("{{#include ")?.strip_suffix("}}")?;
    match inner.split_once(':') {
        Some((path, rest)) => Some((path.to_string(), Some(rest.to_string()))),
        None => Some((inner.to_string(), None)),
    }
}

#[test]
fn every_block_of_the_guide_is_included_from_a_compiled_file() {
    let mut checked = 0;
    for (page, text) in pages() {
        for (info, body) in blocks(&text) {
            // the rules page quotes each case's first error line, held to the cases below
            if page.ends_with("rules-list.md") && info == "text" {
                continue;
            }
            if !info.starts_with("rust") {
                // any other block shows what a compiled case or program prints
                assert!(
                    body.lines().filter(|l| !l.trim().is_empty()).all(|l| include(l).is_some()),
                    "{}: a {info} block that is not made of {{{{#include}}}}s:\n{body}",
                    page.display()
                );
                continue;
            }
            let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
            assert!(
                !lines.is_empty() && lines.iter().all(|l| include(l).is_some()),
                "{}: a Rust block that is not made of {{{{#include}}}}s of compiled files:\n{body}",
                page.display()
            );
            for line in lines {
                let (path, anchor) = include(line).unwrap();
                let file = page.parent().unwrap().join(&path);
                let source = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{}: {path} does not exist", page.display()));
                let compiled = ["examples/", "src/", "gemm-runtime/", "gemm-core/", "gemm-lab/", "gemm-tp/", "tests/"];
                let relative = file.canonicalize().unwrap();
                let relative = relative.strip_prefix(root().canonicalize().unwrap()).unwrap().to_string_lossy().into_owned();
                assert!(
                    compiled.iter().any(|c| relative.starts_with(c)) && relative.ends_with(".rs"),
                    "{}: {relative} is not a compiled source",
                    page.display()
                );
                if let Some(anchor) = anchor {
                    assert!(
                        source.contains(&format!("// ANCHOR: {anchor}\n")) && source.contains(&format!("// ANCHOR_END: {anchor}\n")),
                        "{}: {path} has no anchor {anchor}",
                        page.display()
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "the guide's Rust blocks are found ({checked})");
}

#[test]
fn the_guides_quoted_errors_are_the_compile_fail_cases_own() {
    for (page, text) in pages() {
        for line in text.lines() {
            let Some((path, range)) = include(line) else { continue };
            if !path.ends_with(".stderr") {
                continue;
            }
            let file = page.parent().unwrap().join(&path);
            let stderr = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{}: {path} does not exist", page.display()));
            // a range of lines starts at an error or a warning, so that a case's new
            // lines cannot shift another line under the quote
            if let Some(range) = range {
                let from: usize = range.split(':').next().unwrap().parse().expect("a line number");
                let first = stderr.lines().nth(from - 1).unwrap_or("");
                assert!(first.starts_with("error") || first.starts_with("warning"), "{}: line {from} of {path} is `{first}`", page.display());
            }
        }
    }
    // the rules page holds every case, with its first error line as the case gives it
    let list = std::fs::read_to_string(root().join("docs/src/rules-list.md")).unwrap();
    let ui = root().join("gemm-runtime/tests/ui");
    let mut cases = 0;
    for entry in std::fs::read_dir(&ui).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "stderr") {
            continue;
        }
        cases += 1;
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let stderr = std::fs::read_to_string(&path).unwrap();
        let first = stderr.lines().find(|l| l.starts_with("error")).expect("a compile error");
        assert!(
            list.contains(&format!("(`{name}`)")) && list.contains(&format!("  {first}\n")),
            "docs/src/rules-list.md is out of date for {name}: run scripts/book-rules"
        );
    }
    assert!(cases > 100, "the cases are found ({cases})");
}

#[test]
fn every_page_is_in_the_summary_and_every_link_of_it_reaches_a_page_and_heading() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let src = root().join("docs/src");
    for (page, _) in pages() {
        let name = page.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        assert!(name == "SUMMARY.md" || summary.contains(&format!("({name})")), "{name} is not in SUMMARY.md");
    }
    for (page, text) in pages() {
        for link in text.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
            let path = link.split('#').next().unwrap();
            if path.is_empty() || path.starts_with("http") {
                continue;
            }
            let target = page.parent().unwrap().join(path);
            assert!(target.exists(), "{}: link to {link}, which does not exist", page.display());
            // a link into a page names one of its headings, or an anchor it sets (`<a id="..."></a>`)
            if let Some((_, anchor)) = link.split_once('#').filter(|_| path.ends_with(".md")) {
                let text = std::fs::read_to_string(&target).unwrap();
                let anchors = text.split("<a id=\"").skip(1).filter_map(|rest| rest.split('"').next());
                assert!(
                    heading_ids(&text).iter().map(String::as_str).chain(anchors).any(|h| h == anchor),
                    "{}: link to {link}, whose page has no such heading or anchor",
                    page.display()
                );
            }
        }
    }
}

/// The ids mdBook gives a page's headings: lower case, spaces as `-`, only
/// letters, digits, `-` and `_` kept.
fn heading_ids(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut ids = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = line.strip_prefix('#').filter(|_| !fenced) else { continue };
        let title = title.trim_start_matches('#').trim();
        ids.push(
            title
                .chars()
                .filter_map(|c| match c {
                    c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                    c if c.is_whitespace() => Some('-'),
                    _ => None,
                })
                .collect(),
        );
    }
    ids
}
