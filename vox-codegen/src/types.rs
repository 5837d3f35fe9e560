//! Resolved types and the module's type table.

use crate::source::Span;

/// Index of a user type in [`TypeTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Str,
    Unit,
    Decimal,
    /// An ISO 8601 calendar date, `2026-12-31` (docs/language.md, "Dates").
    Date,
    /// `Image`, `Document`, `Audio`: a file or URL handed to a model as a part of
    /// the request (docs/language.md, "Images, documents and audio").
    Media(Media),
    List(Box<Ty>),
    Option(Box<Ty>),
    /// `Result[T]`: the error is always `str`.
    Result(Box<Ty>),
    /// `map[str, T]`: keys are always `str`; this is the value type
    /// (docs/language.md, "Maps").
    Map(Box<Ty>),
    Named(TypeId),
    /// The type of an expression that never produces a value (`return`).
    Never,
    /// Not yet known (`[]`, `None` without context); fits any type.
    Unknown,
    /// The type of something already reported as wrong; fits any type and
    /// silences follow-on errors.
    Error,
}

impl Ty {
    /// Whether a value of type `found` can be used where `self` is expected.
    pub fn accepts(&self, found: &Ty) -> bool {
        use Ty::*;
        match (self, found) {
            (Error | Unknown, _) | (_, Error | Unknown | Never) => true,
            (List(a), List(b))
            | (Option(a), Option(b))
            | (Result(a), Result(b))
            | (Map(a), Map(b)) => a.accepts(b),
            (a, b) => a == b,
        }
    }

    /// The more informative of two types believed equal (`list[?]` vs `list[int]`).
    pub fn join(&self, other: &Ty) -> Ty {
        use Ty::*;
        match (self, other) {
            (Unknown | Never | Error, b) => b.clone(),
            (a, Unknown | Never | Error) => a.clone(),
            (List(a), List(b)) => List(Box::new(a.join(b))),
            (Option(a), Option(b)) => Option(Box::new(a.join(b))),
            (Result(a), Result(b)) => Result(Box::new(a.join(b))),
            (Map(a), Map(b)) => Map(Box::new(a.join(b))),
            (a, _) => a.clone(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }

    /// True when the type contains no `Unknown`/`Error` holes.
    pub fn is_concrete(&self) -> bool {
        match self {
            Ty::Unknown | Ty::Error => false,
            Ty::List(t) | Ty::Option(t) | Ty::Result(t) | Ty::Map(t) => t.is_concrete(),
            _ => true,
        }
    }

    pub fn display(&self, table: &TypeTable) -> String {
        match self {
            Ty::Int => "int".into(),
            Ty::Float => "float".into(),
            Ty::Bool => "bool".into(),
            Ty::Str => "str".into(),
            Ty::Unit => "Unit".into(),
            Ty::Decimal => "Decimal".into(),
            Ty::Date => "Date".into(),
            Ty::Media(m) => m.name().into(),
            Ty::List(t) => format!("list[{}]", t.display(table)),
            Ty::Option(t) => format!("Option[{}]", t.display(table)),
            Ty::Result(t) => format!("Result[{}]", t.display(table)),
            Ty::Map(t) => format!("map[str, {}]", t.display(table)),
            Ty::Named(id) => table.get(*id).map_or("?".into(), |d| d.name.clone()),
            Ty::Never => "never".into(),
            Ty::Unknown => "_".into(),
            Ty::Error => "{error}".into(),
        }
    }
}

/// The names of the builtin types (`list` also spelt `List`), which no user
/// type or variant may take.
pub const BUILTIN_TYPE_NAMES: [&str; 15] = [
    "int", "float", "bool", "str", "Unit", "list", "List", "Option", "Result", "Decimal", "Date",
    "map", "Image", "Document", "Audio",
];

/// The media types: values a model is given as parts of the request (an
/// image, a PDF, a recording), built from a file or a URL, and never returned by one
/// (docs/language.md, "Images, documents and audio").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Media {
    Image,
    Document,
    Audio,
}

impl Media {
    pub const ALL: [Media; 3] = [Media::Image, Media::Document, Media::Audio];

    /// The Vox type name.
    pub fn name(self) -> &'static str {
        match self {
            Media::Image => "Image",
            Media::Document => "Document",
            Media::Audio => "Audio",
        }
    }

    /// The runtime type the generated Rust uses.
    pub fn rust_type(self) -> &'static str {
        match self {
            Media::Image => "::vox_runtime::Image",
            Media::Document => "::vox_runtime::Document",
            Media::Audio => "::vox_runtime::Audio",
        }
    }

    /// The type name with its article, for messages: "an `Image`", "a `Document`".
    pub fn a_name(self) -> &'static str {
        match self {
            Media::Image => "an `Image`",
            Media::Document => "a `Document`",
            Media::Audio => "an `Audio`",
        }
    }

    /// How a model receives one, for `cargo vox schema`'s list of arguments.
    pub fn part(self) -> &'static str {
        match self {
            Media::Image => "an image part",
            Media::Document => "a document part",
            Media::Audio => "an audio part",
        }
    }

    /// The lowercase word used in prose and in the constructors' names
    /// (`image_file`, `document_url`).
    pub fn word(self) -> &'static str {
        match self {
            Media::Image => "image",
            Media::Document => "document",
            Media::Audio => "audio",
        }
    }
}

/// Where a type holds a media value: the path from the type down to it, in
/// the words a diagnostic uses (`Receipt.scan`, `list[…] element`), and the
/// media type found. Named types are followed once each, so recursive types
/// end.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaPath {
    pub media: Media,
    /// Steps from the outer type inwards, e.g. `["field `scan` of `Receipt`"]`.
    pub steps: Vec<String>,
    /// The named type and field that hold the media last on the way, if any
    /// (for a related span at the field's declaration).
    pub field: Option<(TypeId, Option<usize>, String)>,
}

impl Ty {
    /// The first media value `self` holds, directly or through lists,
    /// options, results, records and variants, with the path to it.
    pub fn media_inside(&self, table: &TypeTable) -> Option<MediaPath> {
        let mut seen = Vec::new();
        media_in(self, table, &mut seen)
    }
}

impl Ty {
    /// Every media type `self` holds at any depth, each once, in
    /// [`Media::ALL`] order.
    pub fn media_kinds(&self, table: &TypeTable) -> Vec<Media> {
        let mut found = Vec::new();
        let mut seen = Vec::new();
        let mut stack = vec![self];
        while let Some(t) = stack.pop() {
            match t {
                Ty::Media(m) if !found.contains(m) => found.push(*m),
                Ty::List(t) | Ty::Option(t) | Ty::Result(t) | Ty::Map(t) => stack.push(t),
                Ty::Named(id) if !seen.contains(id) => {
                    seen.push(*id);
                    if let Some(def) = table.get(*id) {
                        stack.extend(def.every_field().map(|f| &f.ty));
                    }
                }
                _ => {}
            }
        }
        Media::ALL
            .into_iter()
            .filter(|m| found.contains(m))
            .collect()
    }
}

fn media_in(ty: &Ty, table: &TypeTable, seen: &mut Vec<TypeId>) -> Option<MediaPath> {
    match ty {
        Ty::Media(m) => Some(MediaPath {
            media: *m,
            steps: Vec::new(),
            field: None,
        }),
        Ty::List(t) | Ty::Option(t) | Ty::Result(t) | Ty::Map(t) => {
            let mut p = media_in(t, table, seen)?;
            let outer = match ty {
                Ty::List(_) => "an element of a `list`",
                Ty::Map(_) => "a value of a `map`",
                Ty::Option(_) => "the value of an `Option`",
                _ => "the `Ok` value of a `Result`",
            };
            p.steps.insert(0, outer.to_string());
            Some(p)
        }
        Ty::Named(id) => {
            if seen.contains(id) {
                return None;
            }
            seen.push(*id);
            let def = table.get(*id)?;
            for (vi, f) in def.fields_by_variant() {
                if let Some(mut p) = media_in(&f.ty, table, seen) {
                    let step = match vi.and_then(|vi| def.variants()?.get(vi)) {
                        Some(v) => format!("field `{}` of variant `{}`", f.name, v.name),
                        None => format!("field `{}` of `{}`", f.name, def.name),
                    };
                    p.steps.insert(0, step);
                    if p.field.is_none() {
                        p.field = Some((*id, vi, f.name.clone()));
                    }
                    return Some(p);
                }
            }
            None
        }
        _ => None,
    }
}

/// What a builtin type name means: the one place that maps a written type
/// name to a [`Ty`] before user types are looked up.
#[derive(Debug, Clone)]
pub enum BuiltinType {
    /// A type that takes no type arguments (`int`, `str`, `Decimal`, …).
    Plain(Ty),
    /// A type of one type argument (`list[T]`, `Option[T]`, `Result[T]`):
    /// builds it from that argument.
    Generic(fn(Box<Ty>) -> Ty),
    /// `map[str, T]`: two type arguments, the first always `str`.
    Map,
}

impl BuiltinType {
    /// The builtin type called `name`, if any.
    pub fn lookup(name: &str) -> Option<BuiltinType> {
        Some(match name {
            "int" => BuiltinType::Plain(Ty::Int),
            "float" => BuiltinType::Plain(Ty::Float),
            "bool" => BuiltinType::Plain(Ty::Bool),
            "str" => BuiltinType::Plain(Ty::Str),
            "Unit" => BuiltinType::Plain(Ty::Unit),
            "Decimal" => BuiltinType::Plain(Ty::Decimal),
            "Date" => BuiltinType::Plain(Ty::Date),
            "Image" => BuiltinType::Plain(Ty::Media(Media::Image)),
            "Document" => BuiltinType::Plain(Ty::Media(Media::Document)),
            "Audio" => BuiltinType::Plain(Ty::Media(Media::Audio)),
            "list" | "List" => BuiltinType::Generic(Ty::List),
            "Option" => BuiltinType::Generic(Ty::Option),
            "Result" => BuiltinType::Generic(Ty::Result),
            "map" => BuiltinType::Map,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub struct FieldDef {
    pub name: String,
    pub docs: Vec<String>,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct VariantDef {
    pub name: String,
    pub docs: Vec<String>,
    pub fields: Vec<FieldDef>,
    #[allow(dead_code)]
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum TypeDefKind {
    Record(Vec<FieldDef>),
    Sum(Vec<VariantDef>),
    /// `type Category = dynamic`: a string enum whose values each call
    /// supplies (docs/language.md, "Categories known at run time").
    Dynamic,
}

#[derive(Debug, Clone)]
pub struct TypeDef {
    pub name: String,
    pub docs: Vec<String>,
    /// Declared `pub` (read by no stage yet).
    #[allow(dead_code)]
    pub is_pub: bool,
    pub kind: TypeDefKind,
    pub span: Span,
}

impl TypeDef {
    pub fn fields(&self) -> Option<&[FieldDef]> {
        match &self.kind {
            TypeDefKind::Record(f) => Some(f),
            TypeDefKind::Sum(_) | TypeDefKind::Dynamic => None,
        }
    }

    /// A sum type whose cases carry no fields (`type Currency = USD | EUR`):
    /// a JSON string enum in schemas and replies, printed by its case's name
    /// (docs/language.md, "How types look to the model").
    pub fn is_plain_enum(&self) -> bool {
        matches!(&self.kind, TypeDefKind::Sum(v) if !v.is_empty() && v.iter().all(|v| v.fields.is_empty()))
    }

    /// A run-time category type (`type Category = dynamic`).
    pub fn is_dynamic(&self) -> bool {
        matches!(self.kind, TypeDefKind::Dynamic)
    }

    pub fn variants(&self) -> Option<&[VariantDef]> {
        match &self.kind {
            TypeDefKind::Sum(v) => Some(v),
            TypeDefKind::Record(_) | TypeDefKind::Dynamic => None,
        }
    }

    /// Every field of the type, in declaration order, with the index of its
    /// variant (`None` for a record's fields).
    pub fn fields_by_variant(&self) -> impl Iterator<Item = (Option<usize>, &FieldDef)> {
        let (record, variants): (&[FieldDef], &[VariantDef]) = match &self.kind {
            TypeDefKind::Record(f) => (f, &[]),
            TypeDefKind::Sum(v) => (&[], v),
            TypeDefKind::Dynamic => (&[], &[]),
        };
        let sum = variants
            .iter()
            .enumerate()
            .flat_map(|(vi, v)| v.fields.iter().map(move |f| (Some(vi), f)));
        record.iter().map(|f| (None, f)).chain(sum)
    }

    /// Every field of the type: a record's, or each variant's in turn.
    pub fn every_field(&self) -> impl Iterator<Item = &FieldDef> {
        self.fields_by_variant().map(|(_, f)| f)
    }
}

/// Every user type of a module, in declaration order.
#[derive(Debug, Clone, Default)]
pub struct TypeTable {
    pub defs: Vec<TypeDef>,
}

impl TypeTable {
    pub fn get(&self, id: TypeId) -> Option<&TypeDef> {
        self.defs.get(id.0 as usize)
    }

    pub fn ids(&self) -> impl Iterator<Item = TypeId> {
        (0..self.defs.len()).map(|i| TypeId(i as u32))
    }

    /// Where a value of type `ty` holds a `map`, if it does: `"map[str, int]"`
    /// itself, or the path to it (`"field `totals` of `Report`"`). Strict
    /// structured outputs cannot carry a map (docs/language.md, "Maps").
    pub fn map_inside(&self, ty: &Ty) -> Option<String> {
        self.map_inside_seen(ty, &mut Vec::new())
    }

    fn map_inside_seen(&self, ty: &Ty, seen: &mut Vec<TypeId>) -> Option<String> {
        match ty {
            Ty::Map(_) => Some(format!("`{}`", ty.display(self))),
            Ty::List(t) | Ty::Option(t) | Ty::Result(t) => self.map_inside_seen(t, seen),
            Ty::Named(id) => {
                if seen.contains(id) {
                    return None;
                }
                seen.push(*id);
                let def = self.get(*id)?;
                def.every_field().find_map(|f| {
                    self.map_inside_seen(&f.ty, seen).map(|inner| {
                        if matches!(f.ty, Ty::Map(_)) {
                            format!("the field `{}` of `{}` ({inner})", f.name, def.name)
                        } else {
                            inner
                        }
                    })
                })
            }
            _ => None,
        }
    }

    pub fn find(&self, name: &str) -> Option<TypeId> {
        self.defs
            .iter()
            .position(|d| d.name == name)
            .map(|i| TypeId(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_never_fit_anything() {
        let list_int = Ty::List(Box::new(Ty::Int));
        assert!(list_int.accepts(&Ty::List(Box::new(Ty::Unknown))));
        assert!(Ty::Int.accepts(&Ty::Never));
        assert!(!Ty::Int.accepts(&Ty::Float));
        assert_eq!(Ty::List(Box::new(Ty::Unknown)).join(&list_int), list_int);
    }

    #[test]
    fn builtin_type_names_are_the_builtin_types() {
        for name in BUILTIN_TYPE_NAMES {
            assert!(BuiltinType::lookup(name).is_some(), "{name}");
        }
        let list = match BuiltinType::lookup("List") {
            Some(BuiltinType::Generic(make)) => make(Box::new(Ty::Int)),
            other => panic!("{other:?}"),
        };
        assert_eq!(list, Ty::List(Box::new(Ty::Int)));
        assert!(BuiltinType::lookup("Invoice").is_none());
    }
}
