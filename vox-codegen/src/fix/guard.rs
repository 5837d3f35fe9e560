//! A machine-applicable fix must leave the other diagnostics as they were
//! or fix them (docs/diagnostics.md, "Fixes"). A fix of a warning that
//! silences another warning hides it: renaming an unused `total` to
//! `_total` also silences the `{total}`-in-a-plain-string lint, and the
//! program still prints `{total}` literally. Each such fix is tried on a
//! copy of the module, and one whose result loses another warning is
//! offered as a suggestion (`maybe-incorrect`) instead.
//!
//! An error's fix may remove the `unused` warnings that followed from it
//! (`totl` → `total` ends "unused variable `total`"); losing any other
//! warning is hiding it, whatever the fix is for (renaming a misnamed
//! `Total` would silence `{Total}` in a plain string the same way).

use std::collections::HashMap;

use crate::diagnostic::{apply_fixes, Applicability, Code, Diagnostic, Edit};
use crate::source::{SourceFile, SourceMap};

/// How many fixes one check tries, and how many bytes of source the tries
/// may check in all; past either, the fixes that could hide a warning are
/// offered as suggestions (never applied unread).
const BUDGET: usize = 32;
const BUDGET_BYTES: usize = 2 * 1024 * 1024;

/// Downgrades every machine-applicable fix whose result loses another
/// warning of `diagnostics` (or that could not be tried, past the budget,
/// while there are warnings to lose).
///
/// With `try_fixes` false (a build script), none is tried: every fix that
/// could hide a warning is offered as a suggestion.
pub(crate) fn guard_warning_fixes(
    sources: &SourceMap,
    diagnostics: &mut [Diagnostic],
    try_fixes: bool,
) {
    let size: usize = sources.files().map(|(_, f)| f.text.len()).sum();
    let tries = if try_fixes {
        BUDGET.min(BUDGET_BYTES / size.max(1))
    } else {
        0
    };
    let mut budget = tries;
    let key = |d: &Diagnostic| (d.code, d.message.clone());
    let follows = |d: &Diagnostic| matches!(d.code, Code::UnusedVariable | Code::UnusedValue);
    // Every warning, counted (two alike must both stay), and how many of
    // them an error's fix may end.
    let mut warnings: HashMap<(Code, String), usize> = HashMap::new();
    let mut followers = 0;
    for d in diagnostics.iter().filter(|d| !d.is_error()) {
        *warnings.entry(key(d)).or_default() += 1;
        followers += usize::from(follows(d));
    }
    let total: usize = warnings.values().sum();
    for d in diagnostics.iter_mut() {
        let of_error = d.is_error();
        // How many other warnings this diagnostic's fixes must keep.
        let keep = if of_error {
            total - followers
        } else {
            total - 1
        };
        if keep == 0 {
            continue;
        }
        let own_key = key(d);
        for f in d.fixes.iter_mut() {
            if f.applicability != Applicability::MachineApplicable {
                continue;
            }
            let hides = if budget == 0 {
                true
            } else {
                budget -= 1;
                // The warnings this fix must keep.
                let mut others = warnings.clone();
                if of_error {
                    others.retain(|(code, _), _| {
                        !matches!(code, Code::UnusedVariable | Code::UnusedValue)
                    });
                } else if let Some(n) = others.get_mut(&own_key) {
                    *n -= 1;
                }
                hides_a_warning(sources, &f.edits, &others)
            };
            if hides {
                f.applicability = Applicability::MaybeIncorrect;
            }
        }
    }
}

/// Whether applying `edits` loses one of the warnings counted in `others`.
fn hides_a_warning(
    sources: &SourceMap,
    edits: &[Edit],
    others: &HashMap<(Code, String), usize>,
) -> bool {
    if others.is_empty() {
        return false;
    }
    let mut fixed = SourceMap::new();
    for (id, file) in sources.files() {
        let mine: Vec<&Edit> = edits.iter().filter(|e| e.span.file == id).collect();
        let text = if mine.is_empty() {
            file.text.clone()
        } else {
            apply_fixes(&file.text, &mine)
        };
        fixed.add(SourceFile::new(file.name.clone(), text));
    }
    let after = crate::parse(&fixed).check_unguarded(fixed);
    let mut found: HashMap<(Code, String), usize> = HashMap::new();
    for d in after.diagnostics() {
        if !d.is_error() {
            *found.entry((d.code, d.message.clone())).or_default() += 1;
        }
    }
    others
        .iter()
        .any(|(k, n)| found.get(k).copied().unwrap_or(0) < *n)
}
