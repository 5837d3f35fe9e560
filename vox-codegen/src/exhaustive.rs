//! Exhaustiveness and reachability of `match` arms.
//!
//! The classic "usefulness" algorithm (Maranget, *Warnings for pattern
//! matching*): a pattern vector is useful against a matrix of earlier rows
//! if some value matches it and no earlier row. An arm is unreachable when
//! its pattern is not useful; a match is exhaustive when the wildcard is not
//! useful after all arms. Finite types (sum types, `Option`, `Result`,
//! `bool`) are split into their constructors; everything else needs a
//! catch-all. Work is bounded so adversarial inputs cannot blow up.

use crate::ast::{Pattern, PatternKind};
use crate::types::{Ty, TypeTable};

/// A pattern reduced to what matters for coverage.
#[derive(Debug, Clone, PartialEq)]
pub enum Pat {
    Wild,
    Ctor(String, Vec<Pat>),
    /// An int or string literal: covers one value of an infinite type.
    Lit(String),
    /// `A | B`: matches what any alternative matches.
    Or(Vec<Pat>),
    /// An invalid pattern (already reported): matches nothing.
    Opaque,
}

impl Pat {
    pub fn has_opaque(&self) -> bool {
        match self {
            Pat::Opaque => true,
            Pat::Ctor(_, args) | Pat::Or(args) => args.iter().any(Pat::has_opaque),
            _ => false,
        }
    }
}

/// Constructors of a finite type with their field types, or `None` for
/// types with infinitely many values.
fn ctors_of(ty: &Ty, types: &TypeTable) -> Option<Vec<(String, Vec<Ty>)>> {
    match ty {
        Ty::Bool => Some(vec![("true".into(), vec![]), ("false".into(), vec![])]),
        Ty::Option(t) => Some(vec![
            ("Some".into(), vec![(**t).clone()]),
            ("None".into(), vec![]),
        ]),
        Ty::Result(t) => Some(vec![
            ("Ok".into(), vec![(**t).clone()]),
            ("Error".into(), vec![Ty::Str]),
        ]),
        // A record: one constructor, its fields (matched by record patterns).
        Ty::Named(id) if types.get(*id).is_some_and(|d| d.fields().is_some()) => {
            types.get(*id).and_then(|d| {
                d.fields()
                    .map(|fs| vec![(d.name.clone(), fs.iter().map(|f| f.ty.clone()).collect())])
            })
        }
        Ty::Named(id) => types.get(*id).and_then(|d| d.variants()).map(|vs| {
            vs.iter()
                .map(|v| {
                    (
                        v.name.clone(),
                        v.fields.iter().map(|f| f.ty.clone()).collect(),
                    )
                })
                .collect()
        }),
        _ => None,
    }
}

fn field_types(ty: &Ty, ctor: &str, types: &TypeTable) -> Vec<Ty> {
    ctors_of(ty, types)
        .and_then(|cs| cs.into_iter().find(|(n, _)| n == ctor).map(|(_, f)| f))
        .unwrap_or_default()
}

/// Lowers a checked pattern for a value of type `ty`.
pub fn lower(p: &Pattern, ty: &Ty, types: &TypeTable) -> Pat {
    match &p.kind {
        PatternKind::Wildcard | PatternKind::Binding(_) => Pat::Wild,
        PatternKind::Invalid => Pat::Opaque,
        PatternKind::Int(n) => Pat::Lit(n.to_string()),
        PatternKind::Str(s) => Pat::Lit(format!("{s:?}")),
        PatternKind::Bool(b) => Pat::Ctor(b.to_string(), vec![]),
        PatternKind::Or(alts) => Pat::Or(alts.iter().map(|a| lower(a, ty, types)).collect()),
        PatternKind::Record { name, fields, .. } => {
            let Some((cname, tys)) = ctors_of(ty, types).and_then(|mut cs| cs.pop()) else {
                return Pat::Opaque;
            };
            if cname != name.name {
                return Pat::Opaque;
            }
            let Some(def) = types.find(&cname).and_then(|id| types.get(id)) else {
                return Pat::Opaque;
            };
            let names: Vec<String> = def
                .fields()
                .unwrap_or(&[])
                .iter()
                .map(|f| f.name.clone())
                .collect();
            let sub = names
                .iter()
                .zip(&tys)
                .map(|(n, fty)| {
                    fields
                        .iter()
                        .find(|f| f.name.name == *n)
                        .map_or(Pat::Wild, |f| lower(&f.pattern, fty, types))
                })
                .collect();
            Pat::Ctor(cname, sub)
        }
        PatternKind::Ctor { name, args } => {
            let Some(ctors) = ctors_of(ty, types) else {
                return Pat::Opaque;
            };
            let Some((cname, fields)) = ctors.into_iter().find(|(n, _)| *n == name.name) else {
                return Pat::Opaque;
            };
            let args = args.as_deref().unwrap_or(&[]);
            let sub = fields
                .iter()
                .enumerate()
                .map(|(i, fty)| args.get(i).map_or(Pat::Wild, |a| lower(a, fty, types)))
                .collect();
            Pat::Ctor(cname, sub)
        }
    }
}

/// Budgeted usefulness checks over one match (the types are borrowed per
/// call, so the caller can keep checking in between).
pub struct Checker<'a> {
    types: &'a TypeTable,
    budget: &'a mut usize,
}

/// Upper bound on the work per match: recursive steps times the rows each looks at.
pub const BUDGET: usize = 2_000_000;

impl<'a> Checker<'a> {
    pub fn new(types: &'a TypeTable, budget: &'a mut usize) -> Checker<'a> {
        Checker { types, budget }
    }

    /// Whether some value matches `q` but no row; `None` when the work budget ran out.
    pub fn useful(&mut self, rows: &[Vec<Pat>], q: &[Pat], tys: &[Ty]) -> Option<bool> {
        self.witness(rows, q, tys).ok().map(|w| w.is_some())
    }

    /// The top-level values not covered by `rows`, for the error message.
    pub fn missing(&mut self, rows: &[Vec<Pat>], ty: &Ty) -> Vec<String> {
        match ctors_of(ty, self.types) {
            Some(cs) => cs
                .into_iter()
                .filter_map(|(c, fields)| {
                    // The smallest uncovered value under this constructor,
                    // e.g. `Some(Open(_))`.
                    let q = vec![Pat::Ctor(c, vec![Pat::Wild; fields.len()])];
                    let w = self.witness(rows, &q, std::slice::from_ref(ty)).ok()??;
                    Some(format!("`{}`", render(w.first()?, self.types)))
                })
                .collect(),
            None => vec!["`_`".into()],
        }
    }

    /// A value vector matching `q` that no row matches (wildcards where
    /// anything goes): `Ok(None)` when every value of `q` is covered,
    /// `Err(OutOfBudget)` when the work budget ran out.
    fn witness(
        &mut self,
        rows: &[Vec<Pat>],
        q: &[Pat],
        tys: &[Ty],
    ) -> Result<Option<Vec<Pat>>, OutOfBudget> {
        // Each step costs one unit per row it looks at, so wide matches
        // (thousands of arms or alternatives) are bounded too.
        let cost = 1 + rows.len();
        if *self.budget < cost {
            *self.budget = 0;
            return Err(OutOfBudget);
        }
        *self.budget -= cost;
        // A row starting with an or-pattern is one row per alternative.
        let expanded;
        let rows = if rows.iter().any(|r| matches!(r.first(), Some(Pat::Or(_)))) {
            expanded = expand_or_rows(rows, self.budget)?;
            &expanded[..]
        } else {
            rows
        };
        let Some((head, rest)) = q.split_first() else {
            return Ok(rows.is_empty().then(Vec::new));
        };
        let (ty, rest_tys) = match tys.split_first() {
            Some((t, r)) => (t, r),
            None => (&Ty::Error, &[][..]),
        };
        match head {
            Pat::Opaque => Ok(None),
            // Some value matches `q` and no row when it does for one alternative.
            Pat::Or(alts) => {
                for alt in alts {
                    if let Some(w) =
                        self.witness(rows, &prepend(alt.clone(), rest.to_vec()), tys)?
                    {
                        return Ok(Some(w));
                    }
                }
                Ok(None)
            }
            Pat::Ctor(c, args) => {
                let fields = field_types(ty, c, self.types);
                let m = specialize(rows, c, args.len());
                let w = self.witness(&m, &concat(args, rest), &concat(&fields, rest_tys))?;
                Ok(w.map(|w| rebuild(c, args.len(), w)))
            }
            Pat::Lit(l) => {
                let m: Vec<Vec<Pat>> = rows
                    .iter()
                    .filter_map(|r| match r.first() {
                        Some(Pat::Wild) => Some(r[1..].to_vec()),
                        Some(Pat::Lit(x)) if x == l => Some(r[1..].to_vec()),
                        _ => None,
                    })
                    .collect();
                let w = self.witness(&m, rest, rest_tys)?;
                Ok(w.map(|w| prepend(head.clone(), w)))
            }
            Pat::Wild => {
                let ctors = ctors_of(ty, self.types);
                let mentioned = |n: &str| {
                    rows.iter()
                        .any(|r| matches!(r.first(), Some(Pat::Ctor(c, _)) if c == n))
                };
                let complete = ctors
                    .as_ref()
                    .is_some_and(|cs| cs.iter().all(|(n, _)| mentioned(n)));
                match ctors {
                    // Every constructor appears: split on them.
                    Some(cs) if complete => {
                        for (c, fields) in cs {
                            let m = specialize(rows, &c, fields.len());
                            let q2 = concat(&vec![Pat::Wild; fields.len()], rest);
                            if let Some(w) = self.witness(&m, &q2, &concat(&fields, rest_tys))? {
                                return Ok(Some(rebuild(&c, fields.len(), w)));
                            }
                        }
                        Ok(None)
                    }
                    // Some constructor (or value) is missing: only the
                    // wildcard rows can cover it.
                    other => {
                        let m: Vec<Vec<Pat>> = rows
                            .iter()
                            .filter(|r| matches!(r.first(), Some(Pat::Wild)))
                            .map(|r| r[1..].to_vec())
                            .collect();
                        let Some(w) = self.witness(&m, rest, rest_tys)? else {
                            return Ok(None);
                        };
                        // Name a constructor no row mentions, when there is one.
                        let head = other
                            .and_then(|cs| cs.into_iter().find(|(n, _)| !mentioned(n)))
                            .map_or(Pat::Wild, |(c, fields)| {
                                Pat::Ctor(c, vec![Pat::Wild; fields.len()])
                            });
                        Ok(Some(prepend(head, w)))
                    }
                }
            }
        }
    }
}

/// `rows` with every leading or-pattern (nested ones too) split into one
/// row per alternative; each new row costs one unit of the budget.
fn expand_or_rows(rows: &[Vec<Pat>], budget: &mut usize) -> Result<Vec<Vec<Pat>>, OutOfBudget> {
    let mut out = Vec::with_capacity(rows.len());
    let mut stack: Vec<Vec<Pat>> = rows.iter().rev().cloned().collect();
    while let Some(r) = stack.pop() {
        if *budget == 0 {
            return Err(OutOfBudget);
        }
        *budget -= 1;
        match r.split_first() {
            Some((Pat::Or(alts), tail)) => {
                for alt in alts.iter().rev() {
                    stack.push(prepend(alt.clone(), tail.to_vec()));
                }
            }
            _ => out.push(r),
        }
    }
    Ok(out)
}

/// The work budget ran out; the answer is unknown.
#[derive(Debug)]
struct OutOfBudget;

/// `c(first arity values)` followed by the rest of the vector.
fn rebuild(c: &str, arity: usize, w: Vec<Pat>) -> Vec<Pat> {
    let (args, tail) = w.split_at(arity.min(w.len()));
    prepend(Pat::Ctor(c.to_string(), args.to_vec()), tail.to_vec())
}

fn prepend(head: Pat, tail: Vec<Pat>) -> Vec<Pat> {
    let mut out = Vec::with_capacity(tail.len() + 1);
    out.push(head);
    out.extend(tail);
    out
}

/// A pattern as Vox source: `Some(Open(_))`, `Paid`, `_`, and a record's
/// `Invoice { status: Open(_), .. }`.
fn render(p: &Pat, types: &TypeTable) -> String {
    match p {
        Pat::Wild | Pat::Opaque => "_".into(),
        Pat::Lit(l) => l.clone(),
        Pat::Or(alts) => alts
            .iter()
            .map(|a| render(a, types))
            .collect::<Vec<_>>()
            .join(" | "),
        Pat::Ctor(c, args) => {
            let record = types
                .find(c)
                .and_then(|id| types.get(id))
                .and_then(|d| d.fields());
            if let Some(fields) = record {
                let parts: Vec<String> = fields
                    .iter()
                    .zip(args)
                    .filter(|(_, a)| !matches!(a, Pat::Wild))
                    .map(|(f, a)| format!("{}: {}", f.name, render(a, types)))
                    .chain(std::iter::once("..".to_string()))
                    .collect();
                return format!("{c} {{ {} }}", parts.join(", "));
            }
            if args.is_empty() {
                return c.clone();
            }
            format!(
                "{c}({})",
                args.iter()
                    .map(|a| render(a, types))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

fn specialize(rows: &[Vec<Pat>], c: &str, arity: usize) -> Vec<Vec<Pat>> {
    rows.iter()
        .filter_map(|r| match r.first() {
            Some(Pat::Wild) => Some(concat(&vec![Pat::Wild; arity], &r[1..])),
            Some(Pat::Ctor(x, args)) if x == c => {
                // Arity mismatches were reported by the checker; pad or cut.
                let mut a = args.clone();
                a.resize(arity, Pat::Wild);
                Some(concat(&a, &r[1..]))
            }
            _ => None,
        })
        .collect()
}

fn concat<T: Clone>(a: &[T], b: &[T]) -> Vec<T> {
    let mut v = Vec::with_capacity(a.len() + b.len());
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctor(c: &str, args: Vec<Pat>) -> Pat {
        Pat::Ctor(c.into(), args)
    }

    #[test]
    fn option_of_bool() {
        let types = TypeTable::default();
        let ty = Ty::Option(Box::new(Ty::Bool));
        let mut budget = BUDGET;
        let mut c = Checker::new(&types, &mut budget);
        let rows = vec![
            vec![ctor("Some", vec![ctor("true", vec![])])],
            vec![ctor("None", vec![])],
        ];
        assert_eq!(
            c.useful(&rows, &[Pat::Wild], std::slice::from_ref(&ty)),
            Some(true)
        );
        assert_eq!(c.missing(&rows, &ty), vec!["`Some(false)`".to_string()]);
        let mut full = rows.clone();
        full.push(vec![ctor("Some", vec![ctor("false", vec![])])]);
        assert_eq!(
            c.useful(&full, &[Pat::Wild], std::slice::from_ref(&ty)),
            Some(false)
        );
        // An arm after full coverage is useless (unreachable).
        assert_eq!(
            c.useful(&full, &[ctor("None", vec![])], std::slice::from_ref(&ty)),
            Some(false)
        );
    }

    #[test]
    fn or_patterns_cover_each_alternative_even_nested() {
        let types = TypeTable::default();
        let ty = Ty::Option(Box::new(Ty::Bool));
        let mut budget = BUDGET;
        let mut c = Checker::new(&types, &mut budget);
        let t = || ctor("true", vec![]);
        let f = || ctor("false", vec![]);
        // `Some(true | false)` and `None`.
        let rows = vec![
            vec![ctor("Some", vec![Pat::Or(vec![t(), f()])])],
            vec![ctor("None", vec![])],
        ];
        assert_eq!(
            c.useful(&rows, &[Pat::Wild], std::slice::from_ref(&ty)),
            Some(false)
        );
        // `Some(true) | None` leaves `Some(false)`.
        let rows = vec![vec![Pat::Or(vec![
            ctor("Some", vec![t()]),
            ctor("None", vec![]),
        ])]];
        assert_eq!(c.missing(&rows, &ty), vec!["`Some(false)`".to_string()]);
        // An or-pattern is useful when one alternative is.
        assert_eq!(
            c.useful(
                &rows,
                &[Pat::Or(vec![ctor("None", vec![]), ctor("Some", vec![f()])])],
                std::slice::from_ref(&ty)
            ),
            Some(true)
        );
    }

    #[test]
    fn wide_matches_stop_at_the_budget() {
        let types = TypeTable::default();
        let mut budget = BUDGET;
        let rows: Vec<Vec<Pat>> = (0..100_000)
            .map(|i| vec![Pat::Lit(i.to_string())])
            .collect();
        let mut c = Checker::new(&types, &mut budget);
        // Each check looks at every row: the budget allows some, then says "unknown".
        let answers: Vec<Option<bool>> = (0..100)
            .map(|_| c.useful(&rows, &[Pat::Wild], &[Ty::Int]))
            .collect();
        assert_eq!(answers[0], Some(true));
        assert_eq!(answers[99], None);
    }

    #[test]
    fn literals_need_a_catch_all() {
        let types = TypeTable::default();
        let mut budget = BUDGET;
        let mut c = Checker::new(&types, &mut budget);
        let rows = vec![vec![Pat::Lit("1".into())], vec![Pat::Lit("2".into())]];
        assert_eq!(c.useful(&rows, &[Pat::Wild], &[Ty::Int]), Some(true));
        assert_eq!(
            c.useful(&rows, &[Pat::Lit("1".into())], &[Ty::Int]),
            Some(false)
        );
    }
}
