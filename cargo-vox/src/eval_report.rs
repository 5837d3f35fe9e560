//! `cargo vox eval --report DIR`: one self-contained HTML page — no script,
//! no network — with the models side by side, per-field accuracy bars, a
//! latency histogram per model, the cost, and each failing run with its
//! arguments, reply and reason (docs/eval.md, "Report").

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// What the page shows of one model beyond its summary.
pub struct ModelRuns {
    /// Its summary, as the `summary` envelope's `models` list holds it.
    pub summary: Value,
    /// The runs' latencies (ms), each with how many runs took it.
    pub latencies: Vec<(f64, u64)>,
    /// The first failing runs: `{"source", "case", "repeat", "args", "reply",
    /// "reason"}` (the summary's `failed` counts them all).
    pub failing: Vec<Value>,
}

/// Writes `DIR/index.html` and returns its path.
pub fn write(
    dir: &Path,
    function: &str,
    cases: usize,
    repeat: usize,
    models: &[ModelRuns],
) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("index.html");
    std::fs::write(&path, page(function, cases, repeat, models))?;
    Ok(path)
}

/// `text` safe inside HTML text and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(function: &str, cases: usize, repeat: usize, models: &[ModelRuns]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>eval {f}</title><style>\
         body{{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}}\
         table{{border-collapse:collapse;margin:1em 0}}\
         td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}}\
         td.n{{text-align:right}} .bar{{background:#4a7;height:12px}}\
         .track{{background:#eee;width:200px}} pre{{margin:0;white-space:pre-wrap;max-width:40em}}\
         h2{{margin-top:2em}}</style></head><body>\n\
         <h1>eval <code>{f}</code></h1>\n<p>{cases} cases × {repeat} run{s} per model</p>\n",
        f = esc(function),
        s = if repeat == 1 { "" } else { "s" }
    );
    h.push_str(
        "<table id=\"models\"><thead><tr><th>model</th><th>passed</th><th>pass rate</th>\
         <th>p50 ms</th><th>p95 ms</th><th>tokens in / out</th><th>cost</th></tr></thead><tbody>\n",
    );
    for m in models {
        let s = &m.summary;
        let cost = s["cost_usd"]
            .as_f64()
            .map_or("unknown".to_owned(), |c| format!("${c:.6}"));
        let _ = writeln!(
            h,
            "<tr class=\"model\"><td>{}</td><td class=\"n\">{}/{}</td><td class=\"n\">{:.3}</td>\
             <td class=\"n\">{:.1}</td><td class=\"n\">{:.1}</td><td class=\"n\">{} / {}</td>\
             <td class=\"n\">{}</td></tr>",
            esc(s["model"].as_str().unwrap_or("")),
            s["passed"],
            s["runs"],
            s["pass_rate"].as_f64().unwrap_or(0.0),
            s["latency_ms"]["p50"].as_f64().unwrap_or(0.0),
            s["latency_ms"]["p95"].as_f64().unwrap_or(0.0),
            s["usage"]["input_tokens"],
            s["usage"]["output_tokens"],
            esc(&cost)
        );
    }
    h.push_str("</tbody></table>\n");
    for m in models {
        let name = esc(m.summary["model"].as_str().unwrap_or(""));
        let _ = writeln!(h, "<h2>{name}</h2>");
        if let Some(fields) = m.summary["field_accuracy"]
            .as_object()
            .filter(|f| !f.is_empty())
        {
            h.push_str(
                "<table class=\"fields\"><tr><th>field</th><th>accuracy</th><th></th></tr>\n",
            );
            for (field, share) in fields {
                let share = share.as_f64().unwrap_or(0.0);
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td class=\"n\">{:.0}%</td><td><div class=\"track\">\
                     <div class=\"bar\" style=\"width:{:.1}%\"></div></div></td></tr>",
                    esc(field),
                    share * 100.0,
                    share * 100.0
                );
            }
            h.push_str("</table>\n");
        }
        h.push_str(&histogram(&m.latencies));
        if m.failing.is_empty() {
            h.push_str("<p>Every run passed.</p>\n");
            continue;
        }
        h.push_str(
            "<table class=\"failures\"><tr><th>case (line)</th><th>run</th><th>arguments</th>\
             <th>reply</th><th>why</th></tr>\n",
        );
        let failed = m.summary["failed"].as_u64().unwrap_or(0) as usize;
        if failed > m.failing.len() {
            let _ = writeln!(
                h,
                "<p>The first {} of {failed} failing runs (every run is in its `--json` envelope):</p>",
                m.failing.len()
            );
        }
        for f in &m.failing {
            let _ = writeln!(
                h,
                "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td><pre>{}</pre></td>\
                 <td><pre>{}</pre></td><td>{}</td></tr>",
                f["case"],
                f["repeat"].as_u64().unwrap_or(0) + 1,
                esc(&f["args"].to_string()),
                esc(f["reply"].as_str().unwrap_or("")),
                esc(f["reason"].as_str().unwrap_or(""))
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("</body></html>\n");
    h
}

/// The runs' latencies in ten bins, as an inline SVG bar chart.
fn histogram(latencies: &[(f64, u64)]) -> String {
    const BINS: usize = 10;
    let (lo, hi) = latencies
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(x, _)| {
            (lo.min(x), hi.max(x))
        });
    if latencies.is_empty() || !lo.is_finite() {
        return String::new();
    }
    let width = ((hi - lo) / BINS as f64).max(f64::EPSILON);
    let mut counts = [0u64; BINS];
    for &(x, n) in latencies {
        let bin = (((x - lo) / width) as usize).min(BINS - 1);
        counts[bin] += n;
    }
    let runs: u64 = counts.iter().sum();
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let mut svg = String::from(
        "<figure><svg class=\"latency\" width=\"320\" height=\"110\" role=\"img\" \
         aria-label=\"latency histogram\">",
    );
    for (i, &n) in counts.iter().enumerate() {
        let h = 90.0 * n as f64 / most as f64;
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{:.1}\" width=\"28\" height=\"{:.1}\" fill=\"#47a\"><title>{:.1}–{:.1} ms: {n}</title></rect>",
            i * 32,
            95.0 - h,
            h,
            lo + width * i as f64,
            lo + width * (i + 1) as f64
        );
    }
    let _ = writeln!(
        svg,
        "</svg><figcaption>latency, {lo:.1} to {hi:.1} ms, {runs} runs</figcaption></figure>"
    );
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_page_escapes_what_it_quotes_and_holds_every_part() {
        let models = [ModelRuns {
            summary: json!({"model": "a<b>", "passed": 1, "runs": 2, "pass_rate": 0.5,
                "latency_ms": {"p50": 1.0, "p95": 2.0}, "usage": {"input_tokens": 3, "output_tokens": 4},
                "cost_usd": null, "field_accuracy": {"value": 0.5}}),
            latencies: vec![(1.0, 1), (2.0, 1)],
            failing: vec![json!({"case": 2, "repeat": 0, "args": {"text": "<script>"},
                "reply": "{\"value\":1}", "reason": "`value`: expected 2, got 1"})],
        }];
        let html = page("read", 2, 1, &models);
        assert!(
            html.contains("<tr class=\"model\"><td>a&lt;b&gt;</td>"),
            "{html}"
        );
        assert!(
            !html.contains("<script"),
            "nothing it quotes becomes markup"
        );
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("width:50.0%"));
        assert!(html.contains("class=\"latency\""));
        assert!(html.contains("unknown"));
        assert!(html.contains("`value`: expected 2, got 1"));
    }
}
