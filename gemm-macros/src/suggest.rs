//! "did you mean": the known name nearest a misspelt one.

/// The candidate closest to `word` by edit distance, if it is close enough to
/// be a slip (at most one edit in 4 letters, and never a different word of
/// the same length), else `None`.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (word.chars().count() / 4).max(1);
    candidates.iter().map(|c| (distance(word, c), *c)).filter(|&(d, c)| d <= limit && d < c.chars().count()).min_by_key(|&(d, _)| d).map(|(_, c)| c)
}

/// ` (did you mean `x`?)` where a candidate is close to `word` or is its
/// other name, else nothing.
pub fn hint(word: &str, candidates: &[&str]) -> String {
    let known = SYNONYMS.iter().find(|(w, c)| *w == word && candidates.contains(c)).map(|&(_, c)| c);
    known.or_else(|| closest(word, candidates)).map_or(String::new(), |c| format!(" (did you mean `{c}`?)"))
}

/// Other names users write for the attribute's values: the activations'
/// names in other libraries.
const SYNONYMS: &[(&str, &str)] = &[
    ("swish", "silu"),
    ("gelu_erf", "gelu"),
    ("gelu_new", "gelu_tanh"),
    ("gelu_approx", "gelu_tanh"),
    ("gelu_fast", "gelu_tanh"),
    ("gelu_pytorch_tanh", "gelu_tanh"),
];

/// Edits (insertions, deletions, substitutions, swaps of neighbours) that turn
/// `a` into `b`: the optimal string alignment distance.
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_find_the_name_and_other_words_do_not() {
        let tiers = ["block", "warp", "thread", "atom", "staging"];
        assert_eq!(closest("thraed", &tiers), Some("thread"));
        assert_eq!(closest("blok", &tiers), Some("block"));
        assert_eq!(closest("stagin", &tiers), Some("staging"));
        assert_eq!(closest("wrap", &tiers), Some("warp"));
        assert_eq!(closest("tile", &tiers), None);
        assert_eq!(closest("cp_asyn", &["direct", "smem", "cp_async", "tma"]), Some("cp_async"));
        assert_eq!(closest("f61", &["f32", "f16", "bf16"]), Some("f16"));
        assert_eq!(closest("xyz", &["xor"]), None, "two of three letters differ");
        assert_eq!(closest("rowmajor", &["RowMajor", "ColMajor"]), Some("RowMajor"), "case slips count");
        assert_eq!(hint("RowMajr", &["RowMajor", "ColMajor"]), " (did you mean `RowMajor`?)");
    }

    #[test]
    fn other_libraries_names_for_an_activation_find_ours() {
        let activations = ["relu", "gelu", "gelu_tanh", "silu"];
        assert_eq!(hint("swish", &activations), " (did you mean `silu`?)");
        assert_eq!(hint("gelu_pytorch_tanh", &activations), " (did you mean `gelu_tanh`?)");
        assert_eq!(hint("swish", &["tiles", "queue"]), "", "only where the value is a candidate");
    }
}
