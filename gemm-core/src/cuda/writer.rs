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

    pub fn finish(self) -> String {
        self.out
    }
}
