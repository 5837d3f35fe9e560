//! What `cargo vox check` accepts compiles warning-free: the generated code of
//! every fixture crate (soundness, kitchen-sink, invoice-app) and of every
//! valid module under `fixtures/valid/` passes `cargo clippy --all-targets --
//! -D warnings -D clippy::all` with real cargo and no `RUSTFLAGS`, and the
//! soundness crate's Vox `@test`s pass (each of its `vox/*.vox` files is a
//! program that once failed to compile, warned, or ran wrongly).

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use vox_e2e::{cargo, copy_fixture, read, run, vox_files, work_dir, workspace_root, Run, BUILD};

/// Flags from the environment would change what is checked (or hide warnings).
fn without_rustflags(cmd: &mut Command) -> &mut Command {
    for key in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        cmd.env_remove(key);
    }
    cmd
}

/// rustc's and clippy's diagnostics about package `package` in a cargo JSON stream.
fn diagnostics(r: &Run, package: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in r.stdout.lines().filter(|l| l.starts_with('{')) {
        let msg: Value = serde_json::from_str(line).expect("cargo JSON message");
        let ours = msg["package_id"]
            .as_str()
            .is_some_and(|id| id.contains(package));
        if ours
            && msg["reason"] == "compiler-message"
            && !matches!(msg["message"]["level"].as_str(), Some("note" | "help"))
        {
            out.push(
                msg["message"]["rendered"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
    }
    out
}

/// `cargo clippy --all-targets -- -D warnings -D clippy::all` in `dir` succeeds
/// without a single diagnostic for `package`.
fn assert_clippy_clean(dir: &Path, package: &str) {
    let r = run(
        without_rustflags(&mut cargo(dir)).args([
            "clippy",
            "--all-targets",
            "--message-format=json",
            "--",
            "-D",
            "warnings",
            "-D",
            "clippy::all",
        ]),
        BUILD,
    );
    let found = diagnostics(&r, package);
    assert!(
        r.status.success() && found.is_empty(),
        "{package} must pass clippy with -D warnings -D clippy::all:\n{}\n{}",
        found.join("\n"),
        r.dump()
    );
}

/// `cargo test` in `dir` passes, with at least one test and no failure.
fn assert_tests_pass(dir: &Path) -> Run {
    let r = run(without_rustflags(&mut cargo(dir)).arg("test"), BUILD);
    r.assert_success();
    assert!(!r.stdout.contains("FAILED"), "{}", r.dump());
    assert!(r.stdout.contains("test result: ok."), "{}", r.dump());
    r
}

#[test]
fn soundness_fixture_is_clippy_clean_and_its_tests_pass() {
    let copy = copy_fixture("soundness", "fixture-soundness");
    assert_clippy_clean(&copy, "soundness");
    let r = assert_tests_pass(&copy);
    // Every regression file contributes passing tests.
    for needle in [
        "vox_tests::locals_named_self_and_self_underscore_stay_apart ... ok",
        "vox_tests::empty_list_length_is_zero ... ok",
        "vox_tests::nested_option_recursion ... ok",
        "vox_tests::net_recursion_runs ... ok",
        "vox_tests::constructor_as_match_head ... ok",
        "vox_tests::statements_compile_and_run ... ok",
        "vox_tests::names_as_written ... ok",
        "vox_tests::named_arguments_keep_their_values ... ok",
        "vox_tests::diverging_lets_return_their_values ... ok",
        "vox_tests::bindings_typed_by_their_uses ... ok",
        "vox_tests::gen_untyped_empty_lists ... ok",
        "vox_tests::gen_mutually_recursive_types ... ok",
        "named_call_arguments_run_in_written_order - should panic ... ok",
        "escaped_fields_keep_their_vox_names ... ok",
        "recursive_net_futures_are_send_and_run ... ok",
        "vox_tests::arith_edges_in_range ... ok",
        "arith_errors::max_plus_one - should panic ... ok",
        "vox_tests::decimal_arithmetic_is_exact ... ok",
        "decimal_errors::decimal_sum_overflows - should panic ... ok",
        "vox_tests::or_patterns_and_guards ... ok",
        "vox_tests::loops_break_and_continue ... ok",
        "vox_tests::parse_int_reads_signed_trimmed_digits ... ok",
        "vox_tests::parse_float_reads_fractions_and_exponents ... ok",
        "vox_tests::parse_decimal_keeps_the_text ... ok",
        "vox_tests::jumps_as_match_arms ... ok",
        "vox_tests::list_builtins ... ok",
        "vox_tests::text_builtins ... ok",
        "vox_tests::fstrings_interpolate ... ok",
        "vox_tests::triage_program ... ok",
        "vox_tests::try_gives_the_outcome ... ok",
        "vox_tests::media_values_flow_through_the_language ... ok",
        "vox_tests::media_arguments_run_the_fixture_body ... ok",
        "vox_tests::media_shows_where_it_comes_from_never_its_content ... ok",
    ] {
        assert!(
            r.stdout.contains(needle),
            "missing {needle:?}\n{}",
            r.dump()
        );
    }
}

/// `int` overflow, division by zero and the failing `Decimal` operations are
/// the same run-time errors with optimizations and without overflow checks
/// (docs/language.md, "Numbers"): the soundness crate's arithmetic tests,
/// the `should_panic` ones included, pass under `cargo test --release` too.
#[test]
fn arithmetic_errors_are_the_same_in_release() {
    let copy = copy_fixture("soundness", "fixture-soundness-release");
    let r = run(
        without_rustflags(&mut cargo(&copy)).args([
            "test",
            "--release",
            "--lib",
            "--",
            "arith",
            "decimal",
        ]),
        BUILD,
    );
    r.assert_success();
    for needle in [
        "vox_tests::arith_edges_in_range ... ok",
        "vox_tests::arith_division_truncates ... ok",
        "arith_errors::max_plus_one - should panic ... ok",
        "arith_errors::min_div_minus_one - should panic ... ok",
        "arith_errors::neg_min - should panic ... ok",
        "arith_errors::rem_by_zero - should panic ... ok",
        "arith_errors::int_of_nan - should panic ... ok",
        "vox_tests::decimal_arithmetic_is_exact ... ok",
        "decimal_errors::decimal_sum_overflows - should panic ... ok",
    ] {
        assert!(
            r.stdout.contains(needle),
            "missing {needle:?}\n{}",
            r.dump()
        );
    }
    assert!(!r.stdout.contains("FAILED"), "{}", r.dump());
}

#[test]
fn kitchen_sink_is_clippy_clean() {
    let copy = copy_fixture("kitchen-sink", "clippy-kitchen-sink");
    assert_clippy_clean(&copy, "kitchen-sink");
}

#[test]
fn invoice_app_is_clippy_clean() {
    let copy = copy_fixture("invoice-app", "clippy-invoice-app");
    assert_clippy_clean(&copy, "invoice-app");
}

/// Each `fixtures/valid/*.vox` file, compiled as its own module into one
/// crate (`mod <file stem>`), under `#![deny(warnings)]` and clippy.
#[test]
fn valid_modules_are_clippy_clean() {
    let valid = workspace_root().join("fixtures/valid");
    let files = vox_files(&valid);
    assert!(!files.is_empty(), "no valid fixtures");

    let dir = work_dir("clippy-valid-modules").join("valid-modules");
    let dep = |krate: &str| {
        workspace_root()
            .join(krate)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut build = String::from("fn main() {\n");
    let mut lib = String::from("#![deny(warnings)]\n#![deny(clippy::all)]\n\n");
    for file in &files {
        let stem: String = file
            .file_stem()
            .expect("file stem")
            .to_string_lossy()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let module = format!("valid_{stem}");
        let src = dir.join(&module);
        std::fs::create_dir_all(&src).expect("create source dir");
        std::fs::write(src.join("module.vox"), read(file)).expect("copy module");
        build.push_str(&format!(
            "    vox_build::Builder::new().source_dir({module:?}).out_name({module:?}).compile().unwrap();\n"
        ));
        lib.push_str(&format!(
            "pub mod {module} {{\n    vox_runtime::include_vox!({module:?});\n}}\n"
        ));
    }
    build.push_str("}\n");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"valid-modules\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
             [workspace]\n\n[dependencies]\nvox-runtime = {{ path = {:?} }}\n\n\
             [build-dependencies]\nvox-build = {{ path = {:?} }}\n",
            dep("vox-runtime"),
            dep("vox-build")
        ),
    )
    .expect("write Cargo.toml");
    std::fs::write(dir.join("build.rs"), build).expect("write build.rs");
    std::fs::create_dir_all(dir.join("src")).expect("create src");
    std::fs::write(dir.join("src/lib.rs"), lib).expect("write lib.rs");
    std::fs::copy(
        workspace_root().join("fixtures/invoice-app/Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .expect("copy Cargo.lock");

    assert_clippy_clean(&dir, "valid-modules");
    let r = run(without_rustflags(&mut cargo(&dir)).arg("test"), BUILD);
    r.assert_success();
    assert!(!r.stdout.contains("FAILED"), "{}", r.dump());
}
