//! An indenting line writer for generated CUDA.

#[derive(Default)]
pub struct Writer {
    out: String,
    depth: usize,
}

impl Writer {
    /// One line at the current depth; an empty string writes a blank line.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        if !text.is_empty() {
            self.out.extend(std::iter::repeat_n("    ", self.depth));
            self.out.push_str(text);
        }
        self.out.push('\n');
    }

    /// `head {`, then the body one level deeper, then `}`.
    pub fn block(&mut self, head: impl AsRef<str>, body: impl FnOnce(&mut Self)) {
        self.closed_block(head.as_ref(), "}", body);
    }

    /// [`Self::block`] closed by `};`: a lambda or other statement that ends in a block.
    pub fn statement_block(&mut self, head: impl AsRef<str>, body: impl FnOnce(&mut Self)) {
        self.closed_block(head.as_ref(), "};", body);
    }

    fn closed_block(&mut self, head: &str, close: &str, body: impl FnOnce(&mut Self)) {
        self.line(if head.is_empty() { "{".to_string() } else { format!("{head} {{") });
        self.depth += 1;
        body(self);
        self.depth -= 1;
        self.line(close);
    }

    /// A fully unrolled counted loop: `#pragma unroll` then `for (int var = 0; var < n; ++var)`.
    /// A loop of one iteration is written as its body with `[var]` as `[0]`,
    /// so 1x1 tiles read as plainly as hand-written code; bodies use `var`
    /// only as a subscript when `n` can be 1.
    pub fn unrolled(&mut self, var: &str, n: u32, body: impl FnOnce(&mut Self)) {
        if n == 1 {
            let mut inner = Writer { out: String::new(), depth: self.depth };
            body(&mut inner);
            self.out.push_str(&inner.out.replace(&format!("[{var}]"), "[0]"));
            return;
        }
        self.line("#pragma unroll");
        self.block(format!("for (int {var} = 0; {var} < {n}; ++{var})"), body);
    }

    /// `line` inside fully unrolled loops over `loops` (variable, extent),
    /// outermost first.
    pub fn unrolled_nest(&mut self, loops: &[(&str, u32)], line: &str) {
        match loops.split_first() {
            Some((&(var, n), rest)) => self.unrolled(var, n, |w| w.unrolled_nest(rest, line)),
            None => self.line(line),
        }
    }

    /// A declaration of `name` (one line) that [`Self::finish`] keeps only
    /// where code later in its scope uses the name: tiers declare the
    /// indices their atoms and epilogues may use, and NVRTC warns of each
    /// one left unused.
    pub fn declare(&mut self, name: &str, text: impl AsRef<str>) {
        self.line(format!("{MARK}{name}{MARK}{}", text.as_ref()));
    }

    /// The source, without the declarations nothing uses.
    pub fn finish(self) -> String {
        let mut lines: Vec<Option<String>> = self.out.split_inclusive('\n').map(|l| Some(l.to_string())).collect();
        // last first, so that a declaration used only by a dropped one goes too
        for i in (0..lines.len()).rev() {
            let Some(line) = lines[i].as_deref() else { continue };
            let body = line.trim_start_matches(' ');
            let Some((name, decl)) = body.strip_prefix(MARK).and_then(|r| r.split_once(MARK)) else { continue };
            let depth = line.len() - body.len();
            let kept = used(lines[i + 1..].iter().flatten().map(String::as_str), depth, name).then(|| format!("{}{decl}", &line[..depth]));
            lines[i] = kept;
        }
        lines.into_iter().flatten().collect()
    }
}

/// Marks a line of [`Writer::declare`] until [`Writer::finish`].
const MARK: char = '\u{1}';

/// Whether the code (not the comments) of `rest` uses `name` before the
/// scope at indentation `depth` closes.
fn used<'a>(rest: impl Iterator<Item = &'a str>, depth: usize, name: &str) -> bool {
    for line in rest {
        let body = line.trim_start_matches(' ');
        if !body.trim().is_empty() && line.len() - body.len() < depth {
            return false;
        }
        let code = body.split("//").next().unwrap_or_default();
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut from = 0;
        while let Some(at) = code[from..].find(name) {
            let (start, end) = (from + at, from + at + name.len());
            if !code[..start].ends_with(word) && !code[end..].starts_with(word) {
                return true;
            }
            from = end;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::Writer;

    /// A declaration stays where later code of its scope uses its name (not
    /// a comment, not a longer name), and goes where nothing does, with one
    /// used only by a dropped declaration.
    #[test]
    fn declarations_nothing_uses_are_dropped() {
        let mut w = Writer::default();
        w.block("void f()", |w| {
            w.declare("lane", "const int lane = threadIdx.x % 32;");
            w.declare("warp", "const int warp = threadIdx.x / 32;");
            w.declare("group", "const int group = warp / 4;");
            w.declare("row", "const int row = lane / 4;");
            w.line("// each lane's row, warp_m");
            w.line("int warp_m = 0;");
            w.block("if (true)", |w| w.line("use(row);"));
        });
        w.block("void g()", |w| w.line("use(group);"));
        let text = w.finish();
        assert_eq!(
            text,
            "void f() {\n    const int lane = threadIdx.x % 32;\n    const int row = lane / 4;\n    // each lane's row, warp_m\n    int warp_m = 0;\n    if (true) {\n        use(row);\n    }\n}\nvoid g() {\n    use(group);\n}\n"
        );
    }
}
