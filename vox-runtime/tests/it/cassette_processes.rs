//! Several processes recording into one cassette at once lose nothing
//! (docs/runtime.md, "Cassettes"): each recording reads, merges and
//! renames under a lock held across processes. Three processes × 40 calls
//! once left 54 entries of 120, each rename replacing what another process
//! had written since it read the file.
//!
//! The test runs this test binary again as the recording processes (the
//! child test below, selected by name and an environment variable); each
//! answers its calls from the in-memory transport.

use crate::support::{Invoice, EXTRACT_INVOICE};

use std::path::PathBuf;
use std::process::Command;

use vox_runtime::__private::Args;
use vox_runtime::transport::{MemoryTransport, ScriptedReply};
use vox_runtime::{CassetteMode, Client, Config, Provider};

const CHILD_DIR: &str = "VOX_TEST_CASSETTE_CHILD_DIR";
const CHILD_ID: &str = "VOX_TEST_CASSETTE_CHILD_ID";
const PROCESSES: usize = 3;
const CALLS: usize = 40;

#[test]
fn processes_recording_into_one_cassette_at_once_lose_no_entry() {
    let dir = std::env::temp_dir().join(format!("vox-cassette-processes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|id| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "cassette_processes::child_records_its_calls",
                    "--nocapture",
                ])
                .env(CHILD_DIR, &dir)
                .env(CHILD_ID, id.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let text = std::fs::read_to_string(dir.join("extract_invoice.jsonl")).unwrap();
    let mut arguments: Vec<String> = text
        .lines()
        .map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            entry["arguments"]["ocr_text"].as_str().unwrap().to_owned()
        })
        .collect();
    arguments.sort();
    let mut expected: Vec<String> = (0..PROCESSES)
        .flat_map(|p| (0..CALLS).map(move |c| format!("process {p} call {c:02}")))
        .collect();
    expected.sort();
    assert_eq!(arguments, expected);
    // No temporary or lock file is left beside the cassette.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["extract_invoice.jsonl"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One recording process of the test above; does nothing when run on its
/// own.
#[test]
fn child_records_its_calls() {
    let (Some(dir), Some(id)) = (std::env::var_os(CHILD_DIR), std::env::var_os(CHILD_ID)) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let id = id.to_string_lossy().into_owned();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let transport = MemoryTransport::new().otherwise(|_| {
            ScriptedReply::json(
                200,
                &serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant",
                    "content": r#"{"vendor":"ACME","total":7.0}"#}, "finish_reason": "stop"}]}),
            )
        });
        let config = Config::builder(Provider::OpenAi)
            .base_url("http://192.0.2.1/v1")
            .api_key("sk-cassette-processes-0123456789")
            .cassette(&dir)
            .cassette_mode(CassetteMode::Record)
            .build()
            .unwrap();
        let client = Client::builder(config)
            .transport(transport)
            .build()
            .unwrap();
        let calls = (0..CALLS).map(|c| {
            let client = client.clone();
            let text = format!("process {id} call {c:02}");
            tokio::spawn(async move {
                let args = Args::new().arg("ocr_text", &text).unwrap();
                let invoice: Invoice = client
                    .call_ai(&EXTRACT_INVOICE, args, async { panic!("no fixture") })
                    .await
                    .unwrap();
                invoice
            })
        });
        for call in calls.collect::<Vec<_>>() {
            call.await.unwrap();
        }
    });
}
