//! Every way a `cargo vox` command fails before producing its result is
//! reported exactly once: under `--json` as exactly one envelope on stdout
//! (`ok: false`, the command's name, JSONL only), otherwise as one
//! `error: …` line on stderr and nothing on stdout; the exit status is the
//! documented one (1 failure, 2 usage). A corpus of failing command lines,
//! one per error path of the commands (inputs, workspace, module errors,
//! scripts, schema and batch arguments).

use std::path::Path;

use vox_e2e::{only_envelope, vox, work_dir, workspace_root};

/// `(command, args after it, expected exit status)`, run in `dir`.
type Case<'a> = (&'a str, Vec<String>, i32);

fn cases(dir: &Path) -> Vec<Case<'static>> {
    let root = workspace_root();
    let valid = root.join("fixtures/valid").display().to_string();
    let broken = dir.join("broken.vox").display().to_string();
    let no_main = dir.join("no_main.vox").display().to_string();
    let missing = dir.join("missing.vox").display().to_string();
    let no_manifest = dir.join("nowhere/Cargo.toml").display().to_string();
    let root_manifest = root.join("Cargo.toml").display().to_string();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        // Inputs that do not exist: usage.
        ("check", s(&[&missing]), 2),
        ("fmt", s(&[&missing]), 2),
        ("fix", s(&["--dry-run", &missing]), 2),
        ("schema", s(&["Invoice", &missing]), 2),
        ("batch", s(&["f", &missing, "--input", "x.jsonl"]), 2),
        // A path that is not a regular file: the read fails.
        ("check", s(&["/dev/null"]), 1),
        // The workspace: a manifest that is not there, a package that is not a member.
        ("check", s(&["--manifest-path", &no_manifest]), 2),
        ("build", s(&["--manifest-path", &no_manifest]), 2),
        ("test", s(&["--manifest-path", &no_manifest]), 2),
        ("run", s(&["--manifest-path", &no_manifest]), 2),
        (
            "fmt",
            s(&["--manifest-path", &root_manifest, "-p", "no-such-package"]),
            2,
        ),
        // A module with errors where a command needs none: its diagnostics, once.
        ("schema", s(&["Invoice", &broken]), 1),
        ("run", s(&[&broken]), 1),
        ("test", s(&[&broken]), 1),
        // Arguments the module cannot satisfy.
        ("schema", s(&["NoSuchType", &valid]), 2),
        ("schema", s(&["Invoice", &valid, "--provider", "nobody"]), 2),
        (
            "schema",
            s(&[
                "Invoice",
                &valid,
                "--provider",
                "compatible",
                "--response-format",
                "yaml",
            ]),
            2,
        ),
        ("batch", s(&["no_such_fn", &valid, "--input", "x.jsonl"]), 2),
        (
            "batch",
            s(&[
                "extract_invoice",
                &valid,
                "--input",
                &dir.join("no-input.jsonl").display().to_string(),
            ]),
            2,
        ),
        // Scripts that cannot run.
        ("run", s(&[&missing]), 2),
        ("run", s(&[&no_main]), 1),
        // A diagnosis the doctor's registry does not have.
        ("doctor", s(&["--diag", "no.such_diagnosis"]), 2),
    ]
}

#[test]
fn every_failure_is_reported_exactly_once() {
    let dir = work_dir("error-reporting");
    std::fs::write(
        dir.join("broken.vox"),
        "fn main() {\n    let x: int = \"text\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("no_main.vox"),
        "fn helper() to int {\n    return 1\n}\n",
    )
    .unwrap();
    let mut problems = Vec::new();
    for (command, args, code) in cases(&dir) {
        let mut json_args: Vec<&str> = vec!["--json", command];
        json_args.extend(args.iter().map(String::as_str));
        let r = vox(&dir, &json_args);
        if r.code() != Some(code) {
            problems.push(format!(
                "exit {:?}, expected {code}\n{}",
                r.code(),
                r.dump()
            ));
        }
        // Exactly one envelope, of this command, saying it failed.
        let env = only_envelope(&r, command);
        if env.ok {
            problems.push(format!("envelope says ok\n{}", r.dump()));
        }
        if env.error_count == 0 && env.message.as_deref().unwrap_or("").is_empty() {
            problems.push(format!(
                "a failure without diagnostics or message\n{}",
                r.dump()
            ));
        }

        let mut human_args: Vec<&str> = vec![command];
        human_args.extend(args.iter().map(String::as_str));
        let h = vox(&dir, &human_args);
        if h.code() != Some(code) {
            problems.push(format!(
                "exit {:?}, expected {code}\n{}",
                h.code(),
                h.dump()
            ));
        }
        if !h.stdout.is_empty() {
            problems.push(format!("human mode printed on stdout\n{}", h.dump()));
        }
        let said = h
            .stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .count();
        if said != 1 {
            problems.push(format!("{said} `error: ` lines, expected 1\n{}", h.dump()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
