//! Unified diffs of whole files, for `cargo vox fix --dry-run`.

use std::fmt::Write as _;

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Largest middle part (lines × lines) compared line by line; beyond it the
/// middle is shown as one replacement, which is still a correct diff.
const MAX_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

/// The unified diff turning `old` into `new` (empty when they are equal),
/// with `--- a/NAME` and `+++ b/NAME` headers.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_ops(&a, &b);
    let mut out = format!("--- a/{name}\n+++ b/{name}\n");
    // Positions in a and b of each op.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Add => j += 1,
        }
    }
    let mut k = 0;
    while k < ops.len() {
        if ops[k] == Op::Same {
            k += 1;
            continue;
        }
        // A hunk: from CONTEXT lines before this change to CONTEXT after the
        // last change that is at most 2 × CONTEXT unchanged lines further.
        let start = k.saturating_sub(CONTEXT);
        let mut end = k;
        let mut same_run = 0;
        let mut m = k;
        while m < ops.len() {
            if ops[m] == Op::Same {
                same_run += 1;
                if same_run > 2 * CONTEXT {
                    break;
                }
            } else {
                same_run = 0;
                end = m;
            }
            m += 1;
        }
        let stop = (end + 1 + CONTEXT).min(ops.len());
        let (a0, b0) = pos[start];
        let a_len = ops[start..stop].iter().filter(|o| **o != Op::Add).count();
        let b_len = ops[start..stop].iter().filter(|o| **o != Op::Del).count();
        let _ = writeln!(
            out,
            "@@ -{},{a_len} +{},{b_len} @@",
            if a_len == 0 { a0 } else { a0 + 1 },
            if b_len == 0 { b0 } else { b0 + 1 }
        );
        for (op, &(i, j)) in ops[start..stop].iter().zip(&pos[start..stop]) {
            let (sign, line) = match op {
                Op::Same => (' ', a[i]),
                Op::Del => ('-', a[i]),
                Op::Add => ('+', b[j]),
            };
            out.push(sign);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
        k = stop;
    }
    out
}

fn diff_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops = vec![Op::Same; prefix];
    if am.len().saturating_mul(bm.len()) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Del, am.len()));
        ops.extend(std::iter::repeat_n(Op::Add, bm.len()));
    } else {
        // Longest common subsequence, table of suffix lengths.
        let w = bm.len() + 1;
        let mut t = vec![0u32; (am.len() + 1) * w];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                t[i * w + j] = if am[i] == bm[j] {
                    t[(i + 1) * w + j + 1] + 1
                } else {
                    t[(i + 1) * w + j].max(t[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() || j < bm.len() {
            if i < am.len() && j < bm.len() && am[i] == bm[j] {
                ops.push(Op::Same);
                i += 1;
                j += 1;
            } else if i < am.len() && (j == bm.len() || t[(i + 1) * w + j] >= t[i * w + j + 1]) {
                ops.push(Op::Del);
                i += 1;
            } else {
                ops.push(Op::Add);
                j += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, suffix));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("x.vox", old, new),
            "--- a/x.vox\n+++ b/x.vox\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
        assert_eq!(unified("x.vox", old, old), "");
    }

    #[test]
    fn distant_changes_make_two_hunks_and_insertions_count_right() {
        let old: String = (0..20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l2\n", "two\n").replace("l17\n", "l17\nnew\n");
        let d = unified("x", &old, &new);
        assert_eq!(
            d,
            "--- a/x\n+++ b/x\n@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+two\n l3\n l4\n l5\n@@ -16,5 +16,6 @@\n l15\n l16\n l17\n+new\n l18\n l19\n"
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let d = unified("x", "a", "b");
        assert_eq!(
            d,
            "--- a/x\n+++ b/x\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
        );
    }
}
