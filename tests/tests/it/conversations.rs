//! The support-assistant fixture (a conversation so far, a worked example,
//! a Vox tool and a Rust tool; docs/language.md, "Conversations" and
//! "Tools") through real cargo and cargo-vox: its tool loop replays from
//! the committed cassette offline and counts as hits; it runs under
//! `fixture` without calling a tool; a missing Rust tool fails the build
//! on a line that names it; `cargo vox call` runs the loop against a
//! scripted loopback server; `--dry-run` and `schema` show the example and
//! the tools.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use vox_e2e::{cargo, cargo_vox, copy_fixture, envelopes, run, workspace_root, BUILD};

/// A chat-completions server on 127.0.0.1 answering the requests with
/// `replies` in order (the last one again after), keeping each request's
/// body; it stops with the test process.
fn scripted(replies: Vec<serde_json::Value>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let n = {
                let mut all = kept.lock().unwrap();
                all.push(String::from_utf8_lossy(&body).into_owned());
                all.len() - 1
            };
            let reply = replies[n.min(replies.len() - 1)].to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, bodies)
}

fn tool_turn(name: &str, arguments: &str, id: &str) -> serde_json::Value {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": id, "type": "function",
            "function": {"name": name, "arguments": arguments}}]},
        "finish_reason": "tool_calls"}]})
}

fn answer(content: &str) -> serde_json::Value {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant",
        "content": content}, "finish_reason": "stop"}]})
}

#[test]
fn the_tool_loop_replays_from_its_cassette_and_counts_as_hits() {
    let app = workspace_root().join("fixtures/support-assistant");
    let mut cmd = cargo_vox(&app);
    cmd.args(["--json", "test"]);
    let r = run(&mut cmd, BUILD);
    let env = envelopes(&r)
        .into_iter()
        .find(|e| e.command == "test")
        .unwrap_or_else(|| panic!("no test envelope\n{}", r.dump()));
    assert_eq!((env.passed, env.failed), (Some(1), Some(0)), "{}", r.dump());
    // Two model requests: the turn calling `lookup_order` (the Rust tool
    // ran again, its result part of the next key), then the answer.
    assert_eq!(
        (
            env.cassette_hits,
            env.cassette_misses,
            env.cassette_recorded
        ),
        (Some(2), Some(0), Some(0)),
        "{}",
        r.dump()
    );
}

#[test]
fn the_assistant_runs_under_fixture_and_a_missing_rust_tool_fails_the_build_by_name() {
    let copy = copy_fixture("support-assistant", "support-assistant-build");
    let r = run(cargo(&copy).args(["run", "-q"]), BUILD);
    r.assert_success();
    // The function's Vox body answered; no tool was called.
    assert_eq!(r.stdout, "Let me check that for you.\n", "{}", r.dump());

    let lib = copy.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    let without = text
        .split("/// The order system")
        .next()
        .unwrap()
        .to_owned();
    std::fs::write(&lib, without).unwrap();
    let r = run(cargo(&copy).args(["build", "-q"]), BUILD);
    assert_ne!(r.code(), Some(0), "{}", r.dump());
    assert!(
        r.stderr
            .contains("vox_rust_tool_lookup_order_must_be_defined_beside_include_vox")
            && r.stderr.contains("lookup_order"),
        "{}",
        r.dump()
    );
}

#[test]
fn cargo_vox_call_runs_the_loop_against_a_server() {
    let app = workspace_root().join("fixtures/support-assistant");
    let (url, bodies) = scripted(vec![
        tool_turn("search_docs", r#"{"topic":"returns"}"#, "call_docs"),
        // A name the function does not list, then the Rust tool, which a
        // program built from the module alone cannot run.
        tool_turn("delete_all", "{}", "call_x"),
        tool_turn("lookup_order", r#"{"id":"A1"}"#, "call_order"),
        answer(r#"{"reply":"Returns are free within 30 days.","order_status":null}"#),
    ]);
    let mut cmd = cargo_vox(&app);
    cmd.args([
        "--json",
        "call",
        "support",
        "--args",
        r#"{"history":[{"role":"User","content":"Hello"},{"role":"Assistant","content":"Hi! How can I help?"}],"question":"Can I return my lamp?"}"#,
    ])
    .env("VOX_LLM_PROVIDER", "compatible")
    .env("VOX_LLM_BASE_URL", &url)
    .env("VOX_LLM_MAX_RETRIES", "0");
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.code(), Some(0), "{}", r.dump());
    assert!(
        r.stdout.contains("Returns are free within 30 days."),
        "{}",
        r.dump()
    );
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 4, "{bodies:#?}");
    let first: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    let roles: Vec<&str> = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // System, the worked example, the two turns of history, the question.
    assert_eq!(
        roles,
        ["system", "user", "assistant", "user", "assistant", "user"]
    );
    assert!(bodies[1].contains("Returns are free within 30 days of delivery."));
    assert!(bodies[1].contains("call_docs"));
    assert!(bodies[2].contains("there is no tool `delete_all`"));
    assert!(bodies[3].contains("implemented in Rust by the crate"));
}

#[test]
fn dry_run_and_schema_show_the_example_and_the_tools() {
    let app = workspace_root().join("fixtures/support-assistant");
    let mut cmd = cargo_vox(&app);
    cmd.args([
        "--json",
        "call",
        "support",
        "--dry-run",
        "--args",
        r#"{"history":[{"role":"User","content":"Hello"}],"question":"Where is A1?"}"#,
    ])
    .env("VOX_LLM_PROVIDER", "openai")
    .env("OPENAI_API_KEY", "sk-test-never-sent-0123");
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.code(), Some(0), "{}", r.dump());
    let line: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let body = &line["request"]["body"];
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[1]["content"], "Can I send a gift back?");
    assert_eq!(messages[3]["content"], "Hello");
    assert_eq!(messages[4]["content"], "Where is A1?");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["lookup_order", "search_docs"]);

    let mut cmd = cargo_vox(&app);
    cmd.args(["--json", "schema", "Resolution"]);
    let r = run(&mut cmd, BUILD);
    assert_eq!(r.code(), Some(0), "{}", r.dump());
    let line: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        line["examples"][0]["arguments"],
        serde_json::json!({"question": "Can I send a gift back?"})
    );
    assert_eq!(line["tools"][0]["name"], "lookup_order");
    assert_eq!(line["tools"][0]["rust"], true);
    assert_eq!(
        line["tools"][1]["parameters"]["required"],
        serde_json::json!(["topic"])
    );
}
