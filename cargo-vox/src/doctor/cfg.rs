//! `[target.'cfg(…)']` tables apply only where their predicate holds. The
//! host's cfg comes from `rustc --print cfg` (`unix`, `target_os="linux"`,
//! …); predicates are cargo's grammar: a name, `name = "value"`, and
//! `all(…)`, `any(…)`, `not(…)`. Pure and unit-tested.

/// The host's cfg settings, one per `rustc --print cfg` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostCfg {
    settings: Vec<(String, Option<String>)>,
}

impl HostCfg {
    /// Reads `rustc --print cfg` output; lines it cannot read are skipped.
    pub fn parse(text: &str) -> HostCfg {
        let settings = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .filter_map(|line| match line.split_once('=') {
                Some((name, value)) => {
                    let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                    Some((name.trim().to_string(), Some(value.to_string())))
                }
                None => Some((line.to_string(), None)),
            })
            .collect();
        HostCfg { settings }
    }

    fn has(&self, name: &str, value: Option<&str>) -> bool {
        self.settings
            .iter()
            .any(|(n, v)| n == name && v.as_deref() == value)
    }

    /// Whether a `[target.…]` key such as `cfg(target_os = "linux")` holds
    /// on this host; `None` when it is not a `cfg(…)` key or cannot be read.
    pub fn matches(&self, key: &str) -> Option<bool> {
        let inner = key.trim().strip_prefix("cfg(")?.strip_suffix(')')?;
        let mut parser = Parser {
            rest: inner,
            cfg: self,
            depth: 0,
        };
        let result = parser.predicate()?;
        parser.skip_space();
        parser.rest.is_empty().then_some(result)
    }
}

struct Parser<'a> {
    rest: &'a str,
    cfg: &'a HostCfg,
    /// Nesting of `all`/`any`/`not`, bounded so no config can exhaust the
    /// stack.
    depth: usize,
}

/// Deeper predicates than this are unreadable (cargo's own are shallow).
const MAX_DEPTH: usize = 64;

impl<'a> Parser<'a> {
    fn skip_space(&mut self) {
        self.rest = self.rest.trim_start();
    }

    fn eat(&mut self, token: char) -> bool {
        self.skip_space();
        match self.rest.strip_prefix(token) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    fn ident(&mut self) -> Option<&'a str> {
        self.skip_space();
        let end = self
            .rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (ident, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(ident)
    }

    fn string(&mut self) -> Option<&'a str> {
        self.skip_space();
        let body = self.rest.strip_prefix('"')?;
        let end = body.find('"')?;
        self.rest = &body[end + 1..];
        Some(&body[..end])
    }

    fn predicate(&mut self) -> Option<bool> {
        let name = self.ident()?;
        match name {
            "all" | "any" | "not" if self.eat('(') => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return None;
                }
                let mut values = Vec::new();
                loop {
                    if self.eat(')') {
                        break;
                    }
                    values.push(self.predicate()?);
                    if !self.eat(',') {
                        if !self.eat(')') {
                            return None;
                        }
                        break;
                    }
                }
                self.depth -= 1;
                match name {
                    "all" => Some(values.iter().all(|v| *v)),
                    "any" => Some(values.iter().any(|v| *v)),
                    _ => match values.as_slice() {
                        [one] => Some(!one),
                        _ => None,
                    },
                }
            }
            _ => {
                if self.eat('=') {
                    let value = self.string()?;
                    Some(self.cfg.has(name, Some(value)))
                } else {
                    Some(self.cfg.has(name, None))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINUX: &str = "debug_assertions\npanic=\"unwind\"\ntarget_arch=\"x86_64\"\n\
        target_endian=\"little\"\ntarget_env=\"gnu\"\ntarget_family=\"unix\"\n\
        target_feature=\"sse2\"\ntarget_os=\"linux\"\ntarget_pointer_width=\"64\"\nunix\n";

    #[test]
    fn evaluates_cargo_cfg_predicates_against_the_host() {
        let host = HostCfg::parse(LINUX);
        let cases = [
            ("cfg(unix)", true),
            ("cfg(windows)", false),
            ("cfg(target_os = \"linux\")", true),
            ("cfg(target_os=\"macos\")", false),
            ("cfg(all(unix, target_arch = \"x86_64\"))", true),
            ("cfg(all(unix, target_arch = \"aarch64\"))", false),
            ("cfg(any(windows, target_env = \"gnu\"))", true),
            ("cfg(not(windows))", true),
            ("cfg(not(unix))", false),
            ("cfg(all())", true),
            ("cfg(any())", false),
            ("cfg( all( unix , not( target_os = \"macos\" ) , ) )", true),
            ("cfg(target_feature = \"sse2\")", true),
        ];
        for (key, expected) in cases {
            assert_eq!(host.matches(key), Some(expected), "{key}");
        }
    }

    #[test]
    fn unreadable_predicates_are_unknown_not_guessed() {
        let host = HostCfg::parse(LINUX);
        for key in [
            "x86_64-unknown-linux-gnu",
            "cfg(",
            "cfg(unix",
            "cfg(target_os = linux)",
            "cfg(not(unix, windows))",
            "cfg(unix) trailing",
            "cfg(all(unix windows))",
            "cfg(\"unix\")",
        ] {
            assert_eq!(host.matches(key), None, "{key}");
        }
        let deep = format!("cfg({}unix{})", "not(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(host.matches(&deep), None);
        let fine = format!("cfg({}unix{})", "not(".repeat(10), ")".repeat(10));
        assert_eq!(host.matches(&fine), Some(true));
    }
}
