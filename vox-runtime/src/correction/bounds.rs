//! The bound on describing a reply, as a property (issue 19): over seeded,
//! generated recursive types (records, tagged and untagged sum types,
//! lists, `Option`, `Option[Option[T]]`, `Result`, unions with identical
//! branches) and generated replies (deep or wide, up to 64 KiB) with bad
//! values anywhere (wrong types, unknown `kind`s, missing and unexpected
//! fields), every reply goes through parse → repair → correction with
//! repairs on and off in bounded work and time, and the correction names
//! each problem where it is.
//!
//! `VOX_BOUNDS_CASES` sets the number of generated replies (default 200),
//! `VOX_BOUNDS_SEED` the first seed.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::{check, push_key, Checked, MAX_PROBLEMS, MAX_VISITS};
use crate::ai_function::OutputSchema;
use crate::repair::parse_reply;

/// splitmix64, seeded: a failing case is reproduced from its seed.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, pct: u64) -> bool {
        self.next_u64() % 100 < pct
    }
}

/// A Vox type, as far as its schema goes.
#[derive(Debug, Clone)]
enum Ty {
    Int,
    Float,
    Str,
    Bool,
    List(Box<Ty>),
    Opt(Box<Ty>),
    Res(Box<Ty>),
    /// The named type `defs[i]`.
    Named(usize),
    /// `anyOf` of two identical branches: not something vox-codegen emits,
    /// the worst case for an untagged union.
    Twin(Box<Ty>),
}

#[derive(Debug, Clone)]
enum Def {
    Record {
        name: String,
        fields: Vec<(String, Ty)>,
    },
    /// Case 0 has only scalar fields, so every value can end.
    Sum {
        name: String,
        tagged: bool,
        cases: Vec<(String, Vec<(String, Ty)>)>,
    },
}

impl Def {
    fn name(&self) -> &str {
        match self {
            Def::Record { name, .. } | Def::Sum { name, .. } => name,
        }
    }
}

fn closed(fields: &[(String, Value)]) -> Value {
    let mut props = Map::new();
    for (name, schema) in fields {
        props.insert(name.clone(), schema.clone());
    }
    json!({"type": "object", "properties": props,
        "required": fields.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        "additionalProperties": false})
}

fn schema_of(defs: &[Def], ty: &Ty) -> Value {
    match ty {
        Ty::Int => json!({"type": "integer"}),
        Ty::Float => json!({"type": "number"}),
        Ty::Str => json!({"type": "string"}),
        Ty::Bool => json!({"type": "boolean"}),
        Ty::List(t) => json!({"type": "array", "items": schema_of(defs, t)}),
        Ty::Opt(t) => json!({"anyOf": [schema_of(defs, t), {"type": "null"}]}),
        Ty::Res(t) => json!({"anyOf": [
            closed(&[("Ok".into(), schema_of(defs, t))]),
            closed(&[("Err".into(), json!({"type": "string"}))]),
        ]}),
        Ty::Named(i) => json!({"$ref": format!("#/$defs/{}", defs[*i].name())}),
        Ty::Twin(t) => json!({"anyOf": [schema_of(defs, t), schema_of(defs, t)]}),
    }
}

fn def_schema(defs: &[Def], def: &Def) -> Value {
    let fields = |fs: &[(String, Ty)]| -> Vec<(String, Value)> {
        fs.iter()
            .map(|(n, t)| (n.clone(), schema_of(defs, t)))
            .collect()
    };
    match def {
        Def::Record { fields: fs, .. } => closed(&fields(fs)),
        Def::Sum { tagged, cases, .. } => {
            let branches: Vec<Value> = cases
                .iter()
                .map(|(kind, fs)| {
                    let mut all = Vec::new();
                    if *tagged {
                        all.push(("kind".into(), json!({"type": "string", "enum": [kind]})));
                    }
                    all.extend(fields(fs));
                    closed(&all)
                })
                .collect();
            json!({ "anyOf": branches })
        }
    }
}

/// The wrapped schema of `defs[0]`, as generated code carries it.
fn root_schema(defs: &[Def]) -> Value {
    let mut all = Map::new();
    for d in defs {
        all.insert(d.name().to_owned(), def_schema(defs, d));
    }
    json!({"type": "object", "properties": {"value": schema_of(defs, &Ty::Named(0))},
        "required": ["value"], "additionalProperties": false, "$defs": all})
}

/// A field type for a field of `defs[me]`: a direct reference only to a
/// later definition (or from a sum type's non-base case), recursion
/// through `list`/`Option`/`Result`.
fn gen_ty(rng: &mut Rng, n_defs: usize, me: usize, direct_ok: bool, level: usize) -> Ty {
    let scalar = |rng: &mut Rng| match rng.below(4) {
        0 => Ty::Int,
        1 => Ty::Float,
        2 => Ty::Str,
        _ => Ty::Bool,
    };
    if level >= 3 {
        return scalar(rng);
    }
    match rng.below(10) {
        0..=2 => scalar(rng),
        3 => Ty::List(Box::new(gen_ty(rng, n_defs, me, true, level + 1))),
        4 => Ty::Opt(Box::new(gen_ty(rng, n_defs, me, true, level + 1))),
        5 => Ty::Res(Box::new(gen_ty(rng, n_defs, me, true, level + 1))),
        6 => {
            // Identical branches around a list (which can end) or a scalar.
            let inner = if rng.chance(50) {
                Ty::List(Box::new(Ty::Named(rng.below(n_defs))))
            } else {
                scalar(rng)
            };
            Ty::Twin(Box::new(inner))
        }
        7 => Ty::List(Box::new(Ty::Named(rng.below(n_defs)))),
        _ => {
            let target = rng.below(n_defs);
            if direct_ok || target > me {
                Ty::Named(target)
            } else {
                Ty::Opt(Box::new(Ty::Named(target)))
            }
        }
    }
}

fn gen_defs(rng: &mut Rng) -> Vec<Def> {
    let n = 1 + rng.below(4);
    let field_name = |rng: &mut Rng, d: usize, c: usize, f: usize| -> String {
        match rng.below(8) {
            0 => format!("odd key {d}.{c}.{f}"),
            _ => format!("f{d}_{c}_{f}"),
        }
    };
    (0..n)
        .map(|d| {
            if rng.chance(35) {
                let fields = (0..1 + rng.below(4))
                    .map(|f| (field_name(rng, d, 0, f), gen_ty(rng, n, d, false, 0)))
                    .collect();
                Def::Record {
                    name: format!("R{d}"),
                    fields,
                }
            } else {
                let cases = (0..2 + rng.below(3))
                    .map(|c| {
                        let fields = if c == 0 {
                            (0..rng.below(3))
                                .map(|f| (field_name(rng, d, c, f), Ty::Int))
                                .collect()
                        } else {
                            (0..rng.below(4))
                                .map(|f| (field_name(rng, d, c, f), gen_ty(rng, n, d, true, 0)))
                                .collect()
                        };
                        (format!("C{d}_{c}"), fields)
                    })
                    .collect();
                Def::Sum {
                    name: format!("S{d}"),
                    tagged: !rng.chance(15),
                    cases,
                }
            }
        })
        .collect()
}

/// How a value is made wrong.
#[derive(Debug, Clone)]
enum Bad {
    Replace(Value),
    RemoveField(String),
    AddField,
    Kind,
    /// The object or list sent as a string of its JSON (the
    /// `json_in_string` repair takes it back).
    Stringify,
}

/// A place a value can be made wrong, and where the correction must say so.
#[derive(Debug, Clone)]
struct Site {
    /// JSON Pointer into the reply.
    pointer: String,
    /// The JSON path the correction names (`$.value.f0_1_0[2]`).
    path: String,
    bad: Bad,
    /// False inside a union with identical branches: the problem may be
    /// named at an enclosing path.
    exact: bool,
    /// serde's derived `Deserialize` accepts the value anyway: it ignores
    /// unknown fields and takes a missing `Option` field as `None`.
    serde_accepts: bool,
}

struct Gen<'a> {
    defs: &'a [Def],
    rng: Rng,
    nodes_left: isize,
    width: usize,
    deep: bool,
    sites: Vec<Site>,
}

/// Deepest JSON nesting generated (serde_json reads at most 128).
const MAX_JSON_DEPTH: usize = 100;

impl Gen<'_> {
    fn site(&mut self, pointer: &str, path: &str, bad: Bad, exact: bool) {
        self.sites.push(Site {
            pointer: pointer.to_owned(),
            path: path.to_owned(),
            serde_accepts: matches!(bad, Bad::AddField),
            bad,
            exact,
        });
    }

    fn ending(&self, depth: usize) -> bool {
        self.nodes_left <= 0 || depth >= MAX_JSON_DEPTH
    }

    fn value(
        &mut self,
        ty: &Ty,
        ptr: &mut String,
        path: &mut String,
        depth: usize,
        exact: bool,
    ) -> Value {
        self.nodes_left -= 1;
        match ty {
            Ty::Int => {
                self.site(ptr, path, Bad::Replace(json!("oops")), exact);
                json!(self.rng.below(2000) as i64 - 1000)
            }
            Ty::Float => {
                self.site(ptr, path, Bad::Replace(json!("oops")), exact);
                json!(1.5)
            }
            Ty::Str => {
                self.site(ptr, path, Bad::Replace(json!(12)), exact);
                json!("text")
            }
            Ty::Bool => {
                self.site(ptr, path, Bad::Replace(json!("yes")), exact);
                json!(true)
            }
            Ty::List(t) => {
                self.site(ptr, path, Bad::Replace(json!({"oops": 1})), exact);
                self.site(ptr, path, Bad::Stringify, exact);
                let n = if self.ending(depth) {
                    0
                } else if self.deep {
                    1
                } else {
                    self.rng.below(self.width + 1)
                };
                let items = (0..n)
                    .map(|i| {
                        let (p, q) = (ptr.len(), path.len());
                        ptr.push_str(&format!("/{i}"));
                        path.push_str(&format!("[{i}]"));
                        let v = self.value(t, ptr, path, depth + 1, exact);
                        ptr.truncate(p);
                        path.truncate(q);
                        v
                    })
                    .collect();
                Value::Array(items)
            }
            Ty::Opt(t) => {
                if self.ending(depth) || self.rng.chance(if self.deep { 5 } else { 30 }) {
                    Value::Null
                } else {
                    self.value(t, ptr, path, depth, exact)
                }
            }
            Ty::Res(t) => {
                if self.ending(depth) || self.rng.chance(if self.deep { 5 } else { 30 }) {
                    self.site(ptr, path, Bad::Replace(json!({"Error": "e"})), exact);
                    json!({"Err": "went wrong"})
                } else {
                    self.site(ptr, path, Bad::Replace(json!({"Okay": 1})), exact);
                    let (p, q) = (ptr.len(), path.len());
                    ptr.push_str("/Ok");
                    push_key(path, "Ok");
                    let v = self.value(t, ptr, path, depth + 1, exact);
                    ptr.truncate(p);
                    path.truncate(q);
                    json!({ "Ok": v })
                }
            }
            Ty::Twin(t) => self.value(t, ptr, path, depth, false),
            Ty::Named(i) => {
                let def = &self.defs[*i];
                let (kind, fields, tagged) = match def {
                    Def::Record { fields, .. } => (None, fields, true),
                    Def::Sum { tagged, cases, .. } => {
                        let c = if self.ending(depth) {
                            0
                        } else if self.deep && cases.len() > 1 && self.rng.chance(90) {
                            1 + self.rng.below(cases.len() - 1)
                        } else {
                            self.rng.below(cases.len())
                        };
                        let (kind, fields) = &cases[c];
                        (Some(kind), fields, *tagged)
                    }
                };
                // A union told apart by keys alone may name a problem at
                // the union.
                let exact = exact && tagged;
                let mut object = Map::new();
                if let (Some(kind), true) = (kind, tagged) {
                    object.insert("kind".into(), json!(kind));
                    self.site(ptr, path, Bad::Kind, exact);
                }
                // (Without a `kind`, a case less a field may be another case.)
                if let (Some((name, ty)), true) = (fields.get(self.rng.below(fields.len())), tagged)
                {
                    // A missing `Option` field is `None`, not a problem
                    // (docs/runtime.md, "Unknown and missing fields").
                    if !matches!(ty, Ty::Opt(_)) {
                        self.site(ptr, path, Bad::RemoveField(name.clone()), exact);
                    }
                }
                self.site(ptr, path, Bad::AddField, exact);
                self.site(ptr, path, Bad::Stringify, exact);
                for (name, t) in fields {
                    let (p, q) = (ptr.len(), path.len());
                    ptr.push('/');
                    ptr.push_str(&name.replace('~', "~0").replace('/', "~1"));
                    push_key(path, name);
                    let v = self.value(t, ptr, path, depth + 1, exact);
                    ptr.truncate(p);
                    path.truncate(q);
                    object.insert(name.clone(), v);
                }
                Value::Object(object)
            }
        }
    }
}

/// Whether `inner` is `outer` or inside it (JSON Pointers).
fn within(inner: &str, outer: &str) -> bool {
    inner.starts_with(outer)
        && (inner.len() == outer.len() || inner.as_bytes()[outer.len()] == b'/')
}

fn apply(reply: &mut Value, site: &Site) {
    let Some(node) = reply.pointer_mut(&site.pointer) else {
        panic!("no node at {}", site.pointer)
    };
    match &site.bad {
        Bad::Replace(v) => *node = v.clone(),
        Bad::RemoveField(name) => {
            node.as_object_mut().map(|o| o.remove(name));
        }
        Bad::AddField => {
            node.as_object_mut()
                .map(|o| o.insert("zz_extra".into(), json!(1)));
        }
        Bad::Kind => {
            node.as_object_mut()
                .map(|o| o.insert("kind".into(), json!("Nope")));
        }
        Bad::Stringify => *node = Value::String(node.to_string()),
    }
}

/// A reply for `defs[0]` of about `nodes` values, deep (one long chain)
/// or wide, with `bad` sites made wrong (none nested in another); the
/// reply and the sites.
fn reply_for(defs: &[Def], seed: u64, nodes: usize, deep: bool, bad: usize) -> (Value, Vec<Site>) {
    let mut g = Gen {
        defs,
        rng: Rng(seed),
        nodes_left: nodes as isize,
        width: 1 + (seed % 12) as usize,
        deep,
        sites: Vec::new(),
    };
    let (mut ptr, mut path) = (String::from("/value"), String::from("$.value"));
    let value = g.value(&Ty::Named(0), &mut ptr, &mut path, 1, true);
    let mut reply = json!({ "value": value });
    let mut chosen: Vec<Site> = Vec::new();
    for _ in 0..bad * 4 {
        if chosen.len() == bad || g.sites.is_empty() {
            break;
        }
        let site = g.sites[g.rng.below(g.sites.len())].clone();
        if chosen
            .iter()
            .any(|c| within(&c.pointer, &site.pointer) || within(&site.pointer, &c.pointer))
        {
            continue;
        }
        chosen.push(site);
    }
    for site in &chosen {
        apply(&mut reply, site);
    }
    (reply, chosen)
}

/// A type no reply deserializes into: the reply always takes the slow path.
#[derive(Debug, serde::Deserialize)]
enum Never {}

/// A clock for the time bound: this thread's CPU time where Linux reports
/// it (`/proc/thread-self/schedstat`), so a loaded machine, where a run
/// also waits for a core, does not fail the bound; else the wall clock.
struct Clock {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    fn cpu() -> Option<Duration> {
        let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
        Some(Duration::from_nanos(ns))
    }

    fn start() -> Clock {
        Clock {
            cpu: Clock::cpu(),
            wall: Instant::now(),
        }
    }

    fn elapsed(&self) -> Duration {
        match (self.cpu, Clock::cpu()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.wall.elapsed(),
        }
    }
}

/// Time allowed for one reply under 64 KiB: 100 ms of CPU time, even
/// unoptimized (the slowest takes about 20 ms there). Measured by the wall
/// clock, where CPU time is not known, an unoptimized build gets 1 s. The
/// step count is the exact measure; this is the backstop.
fn time_bound() -> Duration {
    if Clock::cpu().is_none() && cfg!(debug_assertions) {
        Duration::from_millis(1_000)
    } else {
        Duration::from_millis(100)
    }
}

/// Steps allowed for a reply of `values` values: linear, a few per value.
fn step_bound(values: usize) -> usize {
    24 * values + 1_000
}

fn count_values(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count_values).sum(),
        Value::Object(o) => o.values().map(count_values).sum(),
        _ => 0,
    }
}

/// Checks one reply; the text of what went wrong, if anything.
fn judge(schema: &'static OutputSchema, reply: &Value, sites: &[Site], label: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let text = reply.to_string();
    if text.len() > 64 * 1024 {
        return failures;
    }
    let values = count_values(reply);
    let root = schema.value();
    let started = Clock::start();
    let checked: Checked = check(root, reply);
    let took = started.elapsed();
    if !checked.complete || checked.steps > step_bound(values) {
        failures.push(format!(
            "{label}: {} steps for {values} values ({} bytes), complete: {}",
            checked.steps,
            text.len(),
            checked.complete
        ));
    }
    if took > time_bound() {
        failures.push(format!(
            "{label}: check took {took:?} ({} bytes)",
            text.len()
        ));
    }
    // Every problem is at a site, and (up to the cap) every site has one.
    let named =
        |site: &Site, path: &str| path == site.path || (!site.exact && site.path.starts_with(path));
    for p in &checked.problems {
        if !sites.iter().any(|s| named(s, &p.path)) {
            failures.push(format!("{label}: problem {p} is at none of {sites:?}"));
        }
    }
    if sites.len() <= MAX_PROBLEMS {
        for s in sites {
            if !checked.problems.iter().any(|p| named(s, &p.path)) {
                failures.push(format!(
                    "{label}: {s:?} is not named; problems: {:?}",
                    checked.problems
                ));
            }
        }
    }
    if sites.is_empty() && !checked.problems.is_empty() {
        failures.push(format!(
            "{label}: a good reply has problems {:?}",
            checked.problems
        ));
    }
    // The whole slow path: parse, repair (on and off), correction text.
    for repair in [true, false] {
        let started = Clock::start();
        let result = parse_reply::<Never>(&text, schema, repair);
        let took = started.elapsed();
        if took > time_bound() {
            failures.push(format!(
                "{label}: parse_reply (repair {repair}) took {took:?} ({} bytes)",
                text.len()
            ));
        }
        match result {
            Ok(_) => failures.push(format!("{label}: a `Never` was parsed")),
            Err(message) => {
                if let Some(first) = checked.problems.first() {
                    if !message.contains(&first.to_string()) {
                        failures.push(format!("{label}: {message:?} lacks {first}"));
                    }
                }
            }
        }
    }
    failures
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// How long one generated case may run before the test fails instead of
/// hanging (an exponential check never ends).
const GUARD: Duration = Duration::from_secs(30);

/// Runs `case` for each seed on a thread of its own, failing when one does
/// not finish within [`GUARD`]; what each returned, in order.
fn guarded<R: Send + 'static>(
    seeds: std::ops::Range<u64>,
    case: impl Fn(u64) -> R + Send + 'static,
) -> Vec<R> {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker_seeds = seeds.clone();
    std::thread::spawn(move || {
        for seed in worker_seeds {
            if tx.send(case(seed)).is_err() {
                return;
            }
        }
    });
    seeds
        .map(|seed| match rx.recv_timeout(GUARD) {
            Ok(r) => r,
            // The worker is left spinning; the test binary ends with the test.
            Err(_) => panic!("seed {seed} did not finish within {GUARD:?}"),
        })
        .collect()
}

/// One generated type and reply: the failures, the reply's size in bytes,
/// the steps its check took, its number of values and the time of check +
/// parse_reply with repairs on and off.
fn generated_case(seed: u64) -> (Vec<String>, usize, usize, usize, Duration) {
    let mut rng = Rng(seed);
    let defs = gen_defs(&mut rng);
    let schema: &'static OutputSchema = Box::leak(Box::new(OutputSchema::new(
        "Generated",
        Box::leak(root_schema(&defs).to_string().into_boxed_str()),
        true,
    )));
    let deep = rng.chance(40);
    let nodes = 20 + rng.below(6_000);
    let bad = if rng.chance(70) { 1 } else { rng.below(30) };
    let (reply, sites) = reply_for(&defs, seed, nodes, deep, bad);
    let started = Clock::start();
    let failures = judge(
        schema,
        &reply,
        &sites,
        &format!("seed {seed} (deep {deep}, {bad} bad)"),
    );
    let took = started.elapsed();
    let steps = check(schema.value(), &reply).steps;
    (
        failures,
        reply.to_string().len(),
        steps,
        count_values(&reply),
        took,
    )
}

#[test]
fn generated_bad_replies_are_described_in_bounded_work_naming_each_problem() {
    let cases = env_u64("VOX_BOUNDS_CASES", 200);
    let first = env_u64("VOX_BOUNDS_SEED", 19);
    let outcomes = guarded(first..first + cases, generated_case);
    let biggest = outcomes.iter().map(|o| o.1).max().unwrap_or(0);
    let most_steps = outcomes.iter().map(|o| o.2).max().unwrap_or(0);
    let worst_ratio = outcomes
        .iter()
        .map(|o| o.2 as f64 / o.3 as f64)
        .fold(0f64, f64::max);
    let slowest = outcomes.iter().map(|o| o.4).max().unwrap_or_default();
    eprintln!(
        "{cases} generated replies: largest {biggest} bytes, most steps {most_steps} \
         (budget {MAX_VISITS}), most steps per value {worst_ratio:.1}, slowest reply \
         (check + parse_reply twice) {slowest:?}"
    );
    let failures: Vec<String> = outcomes.into_iter().flat_map(|o| o.0).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `type Expr = | Lit(v: int) | Add(args: list[Expr]) | Mul(args: list[Expr])`
/// as vox-codegen emits it (an internally tagged enum).
#[derive(Debug, serde::Deserialize)]
#[serde(tag = "kind")]
#[allow(dead_code)] // only deserialized
enum Expr {
    Lit { v: i64 },
    Add { args: Vec<Expr> },
    Mul { args: Vec<Expr> },
}

/// `type Node { value: int, children: list[Node], next: Option[Option[Node]],
/// res: Option[Result[Node]] }` as vox-codegen emits it.
#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)] // only deserialized
struct Node {
    value: i64,
    children: Vec<Node>,
    next: Option<Option<Box<Node>>>,
    res: Option<Result<Box<Node>, String>>,
}

/// Whether a typed parse may accept a reply made wrong at `site`: serde
/// takes it as it is, or repairs take a stringified value back.
fn may_accept(site: &Site, repair: bool) -> bool {
    site.serde_accepts || (repair && matches!(site.bad, Bad::Stringify))
}

/// Replies for generated Rust types go through serde itself: a good reply
/// (deep or wide) deserializes, a bad one is described, both in bounded
/// time — serde's buffering of internally tagged enums included.
fn typed_replies<T: serde::de::DeserializeOwned>(
    defs: Vec<Def>,
    seeds: std::ops::Range<u64>,
) -> Vec<String> {
    let schema: &'static OutputSchema = Box::leak(Box::new(OutputSchema::new(
        "Typed",
        Box::leak(root_schema(&defs).to_string().into_boxed_str()),
        true,
    )));
    let failures = guarded(seeds, move |seed| typed_case::<T>(&defs, schema, seed));
    failures.into_iter().flatten().collect()
}

fn typed_case<T: serde::de::DeserializeOwned>(
    defs: &[Def],
    schema: &'static OutputSchema,
    seed: u64,
) -> Vec<String> {
    let mut failures = Vec::new();
    {
        let mut rng = Rng(seed);
        let deep = rng.chance(50);
        let nodes = 20 + rng.below(5_000);
        let bad = usize::from(rng.chance(70));
        let (reply, sites) = reply_for(defs, seed, nodes, deep, bad);
        let text = reply.to_string();
        if text.len() > 64 * 1024 {
            return failures;
        }
        let label = format!(
            "{} seed {seed} (deep {deep}, {} bytes)",
            defs[0].name(),
            text.len()
        );
        failures.extend(judge(schema, &reply, &sites, &label));
        for repair in [true, false] {
            let started = Clock::start();
            let result = parse_reply::<T>(&text, schema, repair);
            let took = started.elapsed();
            if took > time_bound() {
                failures.push(format!(
                    "{label}: parse_reply (repair {repair}) took {took:?}"
                ));
            }
            match (result, sites.first()) {
                (Ok(_), None) => {}
                (Err(e), None) => failures.push(format!("{label}: a good reply was rejected: {e}")),
                (Ok(_), Some(site)) if !may_accept(site, repair) => {
                    failures.push(format!("{label}: {site:?} was accepted"))
                }
                (Ok(_), Some(_)) => {}
                (Err(e), Some(site)) => {
                    if !e.contains(&format!("{}: ", site.path)) {
                        failures.push(format!("{label}: {e:?} does not name {}", site.path));
                    }
                }
            }
        }
    }
    failures
}

#[test]
fn replies_for_recursive_rust_types_deserialize_or_are_described_in_bounded_time() {
    let expr = vec![Def::Sum {
        name: "Expr".into(),
        tagged: true,
        cases: vec![
            ("Lit".into(), vec![("v".into(), Ty::Int)]),
            (
                "Add".into(),
                vec![("args".into(), Ty::List(Box::new(Ty::Named(0))))],
            ),
            (
                "Mul".into(),
                vec![("args".into(), Ty::List(Box::new(Ty::Named(0))))],
            ),
        ],
    }];
    let node = vec![Def::Record {
        name: "Node".into(),
        fields: vec![
            ("value".into(), Ty::Int),
            ("children".into(), Ty::List(Box::new(Ty::Named(0)))),
            (
                "next".into(),
                Ty::Opt(Box::new(Ty::Opt(Box::new(Ty::Named(0))))),
            ),
            (
                "res".into(),
                Ty::Opt(Box::new(Ty::Res(Box::new(Ty::Named(0))))),
            ),
        ],
    }];
    let cases = env_u64("VOX_BOUNDS_CASES", 200) / 4;
    let first = env_u64("VOX_BOUNDS_SEED", 19);
    let mut failures = typed_replies::<Expr>(expr, first..first + cases);
    failures.extend(typed_replies::<Node>(node, first..first + cases));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Replies that are not JSON, made of the tokens the repairs look for —
/// brackets that never close, quotes of every kind, comments, keys, Python
/// literals — repeated or mixed up to 64 KiB: each is judged (repairs on
/// and off) within the time bound.
#[test]
fn prose_and_token_soup_replies_are_judged_in_bounded_time() {
    static OUT: OutputSchema = OutputSchema::new(
        "Expr",
        r##"{"type":"object","properties":{"value":{"$ref":"#/$defs/Expr"}},"required":["value"],"additionalProperties":false,"$defs":{"Expr":{"anyOf":[{"type":"object","properties":{"kind":{"type":"string","enum":["Lit"]},"v":{"type":"integer"}},"required":["kind","v"],"additionalProperties":false},{"type":"object","properties":{"kind":{"type":"string","enum":["Add"]},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},"required":["kind","args"],"additionalProperties":false}]}}}"##,
        true,
    );
    const TOKENS: &[&str] = &[
        "{",
        "[",
        "}",
        "]",
        "\"",
        "'",
        "'''",
        "\"\"\"",
        "//",
        "/*",
        "*/",
        "\\",
        ":",
        ",",
        " ",
        "\n",
        "a",
        "key:",
        "\"kind\":",
        "\"Lit\"",
        "1",
        "2.0",
        "\"3\"",
        "True",
        "None",
        "null",
        "don't",
        "```json\n",
        "```",
    ];
    let cases = env_u64("VOX_BOUNDS_CASES", 200) / 4;
    let first = env_u64("VOX_BOUNDS_SEED", 19);
    let outcomes = guarded(first..first + cases, |seed| {
        let mut rng = Rng(seed);
        let bytes = 1024 + rng.below(63 * 1024);
        // A few tokens repeated (the worst cases) or a random soup.
        let unit: String = (0..1 + rng.below(4))
            .map(|_| TOKENS[rng.below(TOKENS.len())])
            .collect::<Vec<_>>()
            .join(if rng.chance(50) { " " } else { "" });
        let text = if rng.chance(50) {
            unit.repeat(bytes / unit.len().max(1))
        } else {
            let mut t = String::new();
            while t.len() < bytes {
                t.push_str(TOKENS[rng.below(TOKENS.len())]);
            }
            t
        };
        let mut failures = Vec::new();
        for repair in [true, false] {
            let started = Clock::start();
            let _ = parse_reply::<Never>(&text, &OUT, repair);
            let took = started.elapsed();
            if took > time_bound() {
                failures.push(format!(
                    "seed {seed}: {} bytes of {:?}… (repair {repair}) took {took:?}",
                    text.len(),
                    text.chars().take(40).collect::<String>()
                ));
            }
        }
        failures
    });
    let failures: Vec<String> = outcomes.into_iter().flatten().collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
