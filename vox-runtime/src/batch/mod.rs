//! Bulk runs on the providers' batch engines (docs/runtime.md, "Bulk
//! runs"): one request per input, the same request a normal call sends,
//! submitted as batches, polled, collected, and judged like a normal
//! call's reply; items whose reply is rejected or missing are re-run as
//! normal calls. A job directory records every step as it happens, so a
//! run stopped at any point resumes without submitting a batch twice or
//! losing an item.

mod args;
mod engine;
mod job;
mod time;

use std::collections::HashMap;
use std::fs::File;
use std::future::Future;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use self::args::args_from_json;
use self::engine::{Engine, Line, Lost, Outcome};
use self::job::{
    for_each_item, io_error, read_items, ChunkPlan, ChunkState, Ended, Event, ItemLog, ItemRecord,
    JobDir, Plan, JOB_FORMAT,
};
use crate::ai_function::{AiFunction, Args, OutputSchema};
use crate::cassette::schema_id;
use crate::client::Client;
use crate::correction;
use crate::error::{Error, LAST_ERROR_CHARS};
use crate::prompt::Conversation;
use crate::repair::parse_reply;
use crate::transport::Sender;
use crate::validator::{FnCheck, NoCheck, ValueCheck};
use crate::wire::parse_response;
use crate::wire::Wire;

/// What [`BatchOptions::progress`] calls with each step.
pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

/// How a batch run splits, polls and re-runs.
#[derive(Clone)]
pub struct BatchOptions {
    /// At most this many requests per batch (never more than the
    /// provider's limit: 50,000 for OpenAI, 100,000 for Anthropic).
    pub max_requests_per_batch: u64,
    /// At most this many bytes of request lines per batch (never more
    /// than the provider's limit: 200 MB for OpenAI, 256 MB for Anthropic).
    pub max_bytes_per_batch: u64,
    /// The first wait between two looks at unfinished batches; each
    /// further wait is half as long again, up to `poll_max`.
    pub poll_initial: Duration,
    /// The longest wait between two looks.
    pub poll_max: Duration,
    /// At most this many re-runs are sent as normal calls over the job's
    /// life, each at the provider's full price (those beyond keep their
    /// batch error). A re-run that was in flight when a run was stopped
    /// counts, and so does its making again.
    pub max_reruns: u64,
    /// Re-run the items of a batch the engine failed as a whole (OpenAI
    /// `failed`, or a batch whose results carry no response at all, every
    /// item errored, expired or left out). Off: the run stops with
    /// `Error::Batch` before re-running anything, since the estimate was
    /// made at batch prices and re-runs cost the full price.
    pub rerun_failed_batches: bool,
    /// The largest results file read from a batch engine.
    pub max_download_bytes: usize,
    /// Told of each step (see [`Progress`]).
    pub progress: Option<ProgressHook>,
    /// Also check each value against the function's strict schema (for a
    /// `T` such as `serde_json::Value` that takes any JSON): a value that
    /// does not fit is rejected like a reply that does not parse.
    pub check_schema: bool,
    /// Plan the job (split and write the requests) and stop before
    /// submitting anything: the report then says how many requests and
    /// bytes would be sent, for a cost estimate. Running again without it
    /// submits the planned job.
    pub plan_only: bool,
    /// The call options every item is sent with (docs/runtime.md,
    /// "Options"): the model (a `provider:` prefix allowed), temperature,
    /// completion limit and run-time categories shape the batch's
    /// requests; attempts, timeout and token budget apply to the re-runs,
    /// which are normal calls. Unset ones keep the compiled settings.
    pub call: crate::CallOptions,
}

impl std::fmt::Debug for BatchOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchOptions")
            .field("max_requests_per_batch", &self.max_requests_per_batch)
            .field("max_bytes_per_batch", &self.max_bytes_per_batch)
            .field("poll_initial", &self.poll_initial)
            .field("poll_max", &self.poll_max)
            .field("max_reruns", &self.max_reruns)
            .field("rerun_failed_batches", &self.rerun_failed_batches)
            .field("max_download_bytes", &self.max_download_bytes)
            .field("check_schema", &self.check_schema)
            .field("plan_only", &self.plan_only)
            .finish_non_exhaustive()
    }
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            max_requests_per_batch: u64::MAX,
            max_bytes_per_batch: u64::MAX,
            poll_initial: Duration::from_secs(10),
            poll_max: Duration::from_secs(300),
            max_reruns: u64::MAX,
            rerun_failed_batches: false,
            max_download_bytes: 1 << 30,
            progress: None,
            check_schema: false,
            plan_only: false,
            call: crate::CallOptions::new(),
        }
    }
}

/// A step of a batch run, for a progress display.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Progress {
    /// The inputs were split into `batches` batches of `inputs` requests.
    Planned { inputs: u64, batches: usize },
    /// Batch `chunk` was submitted (or found submitted) as `id`.
    Submitted { chunk: usize, id: String },
    /// Batch `chunk` was seen in state `status`.
    Polled { chunk: usize, status: String },
    /// Batch `chunk`'s results were collected: `accepted` of `count`.
    Collected {
        chunk: usize,
        count: u64,
        accepted: u64,
    },
    /// An item was re-run as a normal call.
    Rerun { index: u64, ok: bool },
}

/// What a finished run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BatchReport {
    /// The job's id (it tags the job's files and batches at the provider).
    pub job: String,
    /// The number of inputs.
    pub inputs: u64,
    /// The number of batches the inputs were split into.
    pub batches: usize,
    /// Bytes of request lines (what is uploaded; about 4 bytes a token).
    pub request_bytes: u64,
    /// Whether the run stopped after planning (`plan_only`).
    pub planned_only: bool,
    /// Whether this run took up a job an earlier run had started sending
    /// (a job only planned before, as by `plan_only`, is not resumed).
    pub resumed: bool,
    /// Items whose batch reply was accepted.
    pub from_batch: u64,
    /// Items re-run as normal calls (this run and earlier ones).
    pub reran: u64,
    /// Items without a value: their re-run failed, or was not made.
    pub failed: u64,
}

/// One item of a job's results, in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchItem<T> {
    /// The input's index (0-based line number).
    pub index: u64,
    /// The value, or why there is none.
    pub result: Result<T, String>,
}

/// Calls the progress hook, if any.
fn tell(options: &BatchOptions, progress: Progress) {
    if let Some(hook) = &options.progress {
        hook(&progress);
    }
}

impl Client {
    /// Runs `function` over `inputs` on its provider's batch engine, with
    /// the job directory `dir` recording every step (docs/runtime.md,
    /// "Bulk runs"). If `dir` holds a job already, it is resumed and
    /// `inputs` is not read; it must be a job of the same function and
    /// schema. The values are read afterwards, in input order, with
    /// [`batch_results`].
    ///
    /// ```no_run
    /// # use vox_runtime::__private::{AiFunction, Args, OutputSchema};
    /// # use vox_runtime::{BatchOptions, Client, Config, Provider};
    /// # static OUT: OutputSchema = OutputSchema::new("int", r#"{"type":"object"}"#, true);
    /// # static COUNT: AiFunction = AiFunction::new("count", "", &OUT);
    /// # async fn f(client: Client) -> Result<(), vox_runtime::Error> {
    /// let inputs = ["one", "two two"].map(|text| Args::new().arg("text", text));
    /// let report = client
    ///     .batch::<i64, _>(&COUNT, "jobs/count".as_ref(), inputs, &BatchOptions::default())
    ///     .await?;
    /// for item in vox_runtime::batch_results::<i64>("jobs/count".as_ref())? {
    ///     println!("{:?}", item?.result);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn batch<T, I>(
        &self,
        function: &AiFunction,
        dir: &Path,
        inputs: I,
        options: &BatchOptions,
    ) -> Result<BatchReport, Error>
    where
        T: DeserializeOwned + Serialize + Send,
        I: IntoIterator<Item = Result<Args, Error>>,
    {
        self.batch_with::<T, I, _>(function, dir, inputs, options, &NoCheck)
            .await
    }

    /// [`Client::batch`] with a check of each value, as
    /// [`Client::call_ai_checked`] makes it (what `@ai(check = f)`
    /// generates): a batch reply whose value the check rejects is re-run
    /// as a normal call, whose re-prompt loop gives the model the
    /// problems.
    pub async fn batch_checked<T, I, C>(
        &self,
        function: &AiFunction,
        dir: &Path,
        inputs: I,
        options: &BatchOptions,
        check: C,
    ) -> Result<BatchReport, Error>
    where
        T: DeserializeOwned + Serialize + Send,
        I: IntoIterator<Item = Result<Args, Error>>,
        C: Fn(&T) -> Vec<String> + Sync,
    {
        self.batch_with::<T, I, _>(function, dir, inputs, options, &FnCheck(check))
            .await
    }

    async fn batch_with<T, I, C>(
        &self,
        function: &AiFunction,
        dir: &Path,
        inputs: I,
        options: &BatchOptions,
        check: &C,
    ) -> Result<BatchReport, Error>
    where
        T: DeserializeOwned + Serialize + Send,
        I: IntoIterator<Item = Result<Args, Error>>,
        C: ValueCheck<T>,
    {
        // Run-time categories: one set for every item of the batch.
        let filled = function.for_call(&options.call)?;
        let function = filled.as_ref().unwrap_or(function);
        let (provider, model) = self.first_target(function, &options.call);
        let engine = Engine::of(provider)?;
        let sender = self.sender_for(provider)?;
        let mut job = JobDir::open(dir)?;
        let output = function.output();
        let schema = schema_id(output.name(), output.json_text());
        let config = self.config();
        // Engine::of accepted the provider: it speaks a wire.
        let wire = Wire::of(provider, config)
            .ok_or_else(|| Error::Batch(format!("provider `{provider}` has no batch API")))?;
        let (plan, planned_before) = match job.plan()? {
            Some(plan) => {
                if plan.function != function.name()
                    || plan.schema != schema
                    || plan.provider != provider.name()
                    || plan.model != model
                {
                    return Err(Error::Batch(format!(
                        "{} holds a job of `{}` ({}, {}:{}), not of `{}` ({schema}, {}:{model}); \
                         use another directory",
                        dir.display(),
                        plan.function,
                        plan.schema,
                        plan.provider,
                        plan.model,
                        function.name(),
                        provider.name()
                    )));
                }
                (plan, true)
            }
            None => {
                let (max_requests, max_bytes) = engine.limits();
                let limits = (
                    options.max_requests_per_batch.clamp(1, max_requests),
                    options.max_bytes_per_batch.min(max_bytes),
                );
                let max_tokens = options
                    .call
                    .max_tokens
                    .or(function.max_tokens())
                    .unwrap_or(config.max_tokens);
                let mut parts = function.request_parts(
                    wire,
                    &model,
                    max_tokens,
                    Some(
                        config
                            .state_shape
                            .decide(wire.states_shape(!function.tools().is_empty())),
                    ),
                )?;
                if let Some(t) = options.call.temperature {
                    parts.to_mut().set_temperature(t);
                }
                let render = |args: &Args| {
                    Conversation::of_function(function.framing(), args)
                        .map(|c| parts.request_body(&c))
                };
                // A batch's requests are written to its job files and
                // uploaded: media arguments are not sent that way.
                let inputs = inputs.into_iter().map(|args| {
                    let args = args?;
                    match args.media().first() {
                        None => Ok(args),
                        Some(media) => Err(Error::Media {
                            argument: media.argument.to_string(),
                            reason: "batch runs do not send media arguments (images, documents, \
                                     audio); call the function one input at a time"
                                .into(),
                        }),
                    }
                });
                let mut plan = Plan {
                    format: JOB_FORMAT,
                    job: new_job_id(),
                    function: function.name().to_owned(),
                    schema,
                    provider: provider.name().to_owned(),
                    model: model.clone(),
                    inputs: 0,
                    chunks: Vec::new(),
                };
                let prefix = plan.custom_id_prefix();
                plan.chunks = plan_chunks(&job, engine, &prefix, inputs, limits, render)?;
                plan.inputs = plan.chunks.iter().map(|c| c.count).sum();
                job.write_plan(&plan)?;
                (plan, false)
            }
        };
        tell(
            options,
            Progress::Planned {
                inputs: plan.inputs,
                batches: plan.chunks.len(),
            },
        );
        let mut states = job.replay(plan.chunks.len())?;
        // Resumed only if an earlier run had begun to submit: a plan alone
        // (`plan_only`, as `cargo vox batch` makes for its estimate) is
        // not a run.
        let resumed = planned_before && states.iter().any(ChunkState::started);
        let mut report = BatchReport {
            job: plan.job.clone(),
            inputs: plan.inputs,
            batches: plan.chunks.len(),
            request_bytes: plan.chunks.iter().map(|c| c.bytes).sum(),
            resumed,
            ..BatchReport::default()
        };
        if options.plan_only {
            report.planned_only = true;
            return Ok(report);
        }
        let schema_root = match options.check_schema {
            true => Some(
                serde_json::from_str::<serde_json::Value>(output.json_text()).map_err(|e| {
                    Error::Config(format!("the function's schema is not JSON: {e}"))
                })?,
            ),
            false => None,
        };
        let prefix = plan.custom_id_prefix();
        let run = Run {
            prefix: &prefix,
            engine,
            sender,
            plan: &plan,
            options,
            wire,
            output,
            schema_root: schema_root.as_ref(),
            repair: config.repair,
            limit: options.max_download_bytes,
        };
        for chunk in 0..plan.chunks.len() {
            if states[chunk].batch.is_none() && !states[chunk].collected {
                run.submit(&mut job, &mut states, chunk).await?;
            }
        }
        run.wait::<T, C>(&mut job, &mut states, check).await?;
        if !options.rerun_failed_batches {
            whole_failures(&plan, &states)?;
        }
        let mut budget = options.max_reruns;
        let rerun = Rerun {
            function,
            job: &job,
            plan: &plan,
            options,
            schema_root: schema_root.as_ref(),
            concurrency: config.max_concurrent_requests.max(1),
        };
        for chunk in 0..plan.chunks.len() {
            self.rerun_chunk::<T, C>(&rerun, chunk, &mut budget, &mut report, check)
                .await?;
        }
        Ok(report)
    }

    /// Re-runs, as normal calls, the items of `chunk` whose batch reply was
    /// rejected or missing and that no earlier run re-ran; counts them all.
    /// Up to `rerun.concurrency` re-runs are in flight at once (the client's
    /// cap on concurrent requests); each is appended to the chunk's re-run
    /// log, and fsynced, as soon as it finishes, in whatever order they
    /// finish. A run stopped meanwhile re-runs on resume only the items
    /// whose outcome is not in the log.
    async fn rerun_chunk<T, C>(
        &self,
        rerun: &Rerun<'_>,
        chunk: usize,
        budget: &mut u64,
        report: &mut BatchReport,
        check: &C,
    ) -> Result<(), Error>
    where
        T: DeserializeOwned + Serialize + Send,
        C: ValueCheck<T>,
    {
        let Rerun {
            function,
            job,
            plan,
            options,
            schema_root,
            concurrency,
        } = *rerun;
        let output = function.output();
        let check = Checks {
            schema_root,
            output,
            check,
        };
        let ChunkPlan { first, count, .. } = plan.chunks[chunk];
        // Which items have a value or an outcome already: a bit per item,
        // so that memory does not grow with a batch's size beyond that.
        let results = ItemBits::read(&job.results_path(chunk), first, count)?;
        let done = ItemBits::read(&job.reruns_path(chunk), first, count)?;
        report.reran += done.present_count();
        // Every re-run sent before, in flight when its run was stopped or
        // not, was paid for: it counts against the budget.
        *budget = budget.saturating_sub(done.sends());
        let mut log: Option<ItemLog> = None;
        let args_path = job.args_path(chunk);
        let args_file = File::open(&args_path).map_err(|e| io_error("read", &args_path, e))?;
        let mut lines = BufReader::new(args_file).lines();
        let mut index = first;
        let end = first + count;
        let mut running = Vec::new();
        loop {
            // Start re-runs, in input order, until `concurrency` are running.
            while running.len() < concurrency && index < end {
                let i = index;
                index += 1;
                let line = lines
                    .next()
                    .transpose()
                    .map_err(|e| io_error("read", &args_path, e))?;
                if results.accepted(i) {
                    report.from_batch += 1;
                    continue;
                }
                if done.present(i) {
                    if !done.accepted(i) {
                        report.failed += 1;
                    }
                    continue;
                }
                if *budget == 0 {
                    if done.sent(i) {
                        // Sent by a stopped run, its answer lost, and not
                        // made again.
                        report.reran += 1;
                    }
                    report.failed += 1;
                    continue;
                }
                let line = line.ok_or_else(|| {
                    Error::Batch(format!(
                        "{} has fewer lines than planned",
                        args_path.display()
                    ))
                })?;
                let args = args_from_json(&line)?;
                // The intent first, on disk before the call is sent: a run
                // stopped with it in flight is known to have paid for it.
                let log = match &mut log {
                    Some(log) => log,
                    None => log.insert(ItemLog::open(&job.reruns_path(chunk), false)?),
                };
                log.push(
                    &ItemRecord {
                        i,
                        ok: None,
                        rerun: None,
                        err: None,
                        repairs: None,
                        sent: true,
                    },
                    true,
                )?;
                *budget -= 1;
                report.reran += 1;
                let check = &check;
                running.push(Box::pin(async move {
                    (
                        i,
                        self.rerun::<T, _>(function, &options.call, &args, check)
                            .await,
                    )
                }));
            }
            if running.is_empty() {
                return Ok(());
            }
            let (i, outcome) = next_done(&mut running).await;
            let record = match outcome {
                Ok(value) => ItemRecord {
                    i,
                    ok: Some(to_value(&value)?),
                    rerun: None,
                    err: None,
                    repairs: None,
                    sent: false,
                },
                Err(error) => {
                    report.failed += 1;
                    ItemRecord {
                        i,
                        ok: None,
                        rerun: None,
                        err: Some(error.to_string()),
                        repairs: None,
                        sent: false,
                    }
                }
            };
            let ok = record.ok.is_some();
            let log = match &mut log {
                Some(log) => log,
                None => log.insert(ItemLog::open(&job.reruns_path(chunk), false)?),
            };
            log.push(&record, true)?;
            tell(options, Progress::Rerun { index: i, ok });
        }
    }
}

/// Waits for the first of `running` to finish, removes it and returns its
/// output. Each wake polls every future: there are at most the client's
/// concurrency cap of them.
async fn next_done<F: Future + Unpin>(running: &mut Vec<F>) -> F::Output {
    std::future::poll_fn(|cx| {
        for i in 0..running.len() {
            if let Poll::Ready(output) = Pin::new(&mut running[i]).poll(cx) {
                drop(running.swap_remove(i));
                return Poll::Ready(output);
            }
        }
        Poll::Pending
    })
    .await
}

/// The checks a value goes through besides its type: the strict schema
/// (with [`BatchOptions::check_schema`]) and the function's own check.
struct Checks<'a, C> {
    schema_root: Option<&'a serde_json::Value>,
    output: &'a OutputSchema,
    check: &'a C,
}

impl<T: Serialize, C: ValueCheck<T>> ValueCheck<T> for Checks<'_, C> {
    fn check(&self, value: &T) -> Result<(), String> {
        if let (Some(root), Ok(json)) = (self.schema_root, to_value(value)) {
            if let Some(problem) = schema_problems(root, self.output, &json).into_iter().next() {
                return Err(problem);
            }
        }
        self.check.check(value)
    }

    fn check_fixture(&self, function: &AiFunction, value: T) -> Result<T, Error> {
        self.check.check_fixture(function, value)
    }
}

/// Which items of a chunk an item log holds an outcome of (`present`),
/// which of them with a value (`accepted`), and which were sent as
/// re-runs (`sent`), a bit each; and how many sends it records.
struct ItemBits {
    first: u64,
    present: Vec<u64>,
    accepted: Vec<u64>,
    sent: Vec<u64>,
    sent_lines: u64,
}

impl ItemBits {
    fn read(path: &Path, first: u64, count: u64) -> Result<ItemBits, Error> {
        let words = count.div_ceil(64) as usize;
        let mut bits = ItemBits {
            first,
            present: vec![0; words],
            accepted: vec![0; words],
            sent: vec![0; words],
            sent_lines: 0,
        };
        for_each_item(path, |record| {
            let Some(offset) = record.i.checked_sub(first).filter(|&o| o < count) else {
                return;
            };
            let (word, bit) = ((offset / 64) as usize, 1u64 << (offset % 64));
            if record.sent {
                bits.sent[word] |= bit;
                bits.sent_lines += 1;
                return;
            }
            bits.present[word] |= bit;
            // Later lines win, as in `read_items`.
            if record.ok.is_some() {
                bits.accepted[word] |= bit;
            } else {
                bits.accepted[word] &= !bit;
            }
        })?;
        Ok(bits)
    }

    fn get(words: &[u64], first: u64, index: u64) -> bool {
        let Some(offset) = index.checked_sub(first) else {
            return false;
        };
        words
            .get((offset / 64) as usize)
            .is_some_and(|w| w & (1 << (offset % 64)) != 0)
    }

    fn present(&self, index: u64) -> bool {
        Self::get(&self.present, self.first, index)
    }

    fn accepted(&self, index: u64) -> bool {
        Self::get(&self.accepted, self.first, index)
    }

    fn sent(&self, index: u64) -> bool {
        Self::get(&self.sent, self.first, index)
    }

    fn present_count(&self) -> u64 {
        self.present.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Re-runs sent: one per `sent` record, and one per outcome without
    /// one (a log written before `sent` records were).
    fn sends(&self) -> u64 {
        let unannounced: u64 = self
            .present
            .iter()
            .zip(&self.sent)
            .map(|(p, s)| u64::from((p & !s).count_ones()))
            .sum();
        self.sent_lines + unannounced
    }
}

/// What re-running a chunk's items needs.
#[derive(Clone, Copy)]
struct Rerun<'a> {
    function: &'a AiFunction,
    job: &'a JobDir,
    plan: &'a Plan,
    options: &'a BatchOptions,
    schema_root: Option<&'a serde_json::Value>,
    /// At most this many re-runs at once.
    concurrency: usize,
}

/// What the submitting and collecting steps share.
struct Run<'a> {
    /// The start of this job's `custom_id`s.
    prefix: &'a str,
    engine: Engine,
    sender: &'a Sender,
    plan: &'a Plan,
    options: &'a BatchOptions,
    wire: Wire,
    output: &'a OutputSchema,
    /// The parsed schema, when values are checked against it.
    schema_root: Option<&'a serde_json::Value>,
    repair: bool,
    limit: usize,
}

impl Run<'_> {
    /// Submits chunk `chunk` exactly once: finds what an earlier, stopped
    /// run may have uploaded or created before doing it again.
    async fn submit(
        &self,
        job: &mut JobDir,
        states: &mut [ChunkState],
        chunk: usize,
    ) -> Result<(), Error> {
        let plan = self.plan;
        let requests_path = job.requests_path(chunk);
        let requests_len = std::fs::metadata(&requests_path)
            .map_err(|e| io_error("read", &requests_path, e))?
            .len();
        let mut file = states[chunk].file.clone();
        if self.engine == Engine::OpenAi && file.is_none() {
            let name = Engine::file_name(&plan.job, chunk);
            let found = if states[chunk].uploading {
                self.engine
                    .find_file(self.sender, &name, requests_len, self.limit)
                    .await?
            } else {
                None
            };
            let id = match found {
                Some(id) => id,
                None => {
                    job.record(&Event::Uploading { chunk })?;
                    self.engine
                        .upload(self.sender, &name, &requests_path, self.limit)
                        .await?
                }
            };
            job.record(&Event::File {
                chunk,
                id: id.clone(),
            })?;
            file = Some(id);
        }
        let found = match states[chunk].creating {
            Some(since) => {
                let claimed: Vec<String> = states.iter().filter_map(|s| s.batch.clone()).collect();
                let lost = Lost {
                    job: &plan.job,
                    prefix: self.prefix,
                    ids_are_unique: plan.format >= 2,
                    chunk,
                    count: plan.chunks[chunk].count,
                    since,
                    claimed: &claimed,
                    poll: (self.options.poll_initial, self.options.poll_max),
                };
                self.engine
                    .find_batch(self.sender, &lost, self.limit)
                    .await?
            }
            None => None,
        };
        let id = match found {
            Some(id) => id,
            None => {
                let at = unix_now();
                job.record(&Event::Creating { chunk, at })?;
                states[chunk].creating = Some(at);
                self.engine
                    .create(
                        self.sender,
                        &plan.job,
                        chunk,
                        file.as_deref(),
                        &requests_path,
                        self.limit,
                    )
                    .await?
            }
        };
        job.record(&Event::Batch {
            chunk,
            id: id.clone(),
        })?;
        states[chunk].batch = Some(id.clone());
        tell(self.options, Progress::Submitted { chunk, id });
        Ok(())
    }

    /// Polls every submitted batch, with backoff, until each has ended and
    /// its results are collected.
    async fn wait<T, C>(
        &self,
        job: &mut JobDir,
        states: &mut [ChunkState],
        check: &C,
    ) -> Result<(), Error>
    where
        T: DeserializeOwned + Serialize,
        C: ValueCheck<T>,
    {
        let mut delay = self.options.poll_initial;
        loop {
            let mut pending = false;
            for chunk in 0..states.len() {
                if states[chunk].collected {
                    continue;
                }
                if states[chunk].ended.is_none() {
                    let Some(id) = states[chunk].batch.clone() else {
                        continue;
                    };
                    let status = self.engine.status(self.sender, &id, self.limit).await?;
                    tell(
                        self.options,
                        Progress::Polled {
                            chunk,
                            status: status.status.clone(),
                        },
                    );
                    if !status.ended {
                        pending = true;
                        continue;
                    }
                    if let Some(failure) = &status.failure {
                        tracing::warn!(chunk, batch = %id, failure = %failure, "vox.batch_failed");
                    }
                    record_ended(job, states, chunk, status)?;
                }
                self.collect::<T, C>(job, states, chunk, check).await?;
            }
            if !pending {
                return Ok(());
            }
            tokio::time::sleep(delay).await;
            delay = delay.mul_f64(1.5).min(self.options.poll_max);
        }
    }

    /// Downloads chunk `chunk`'s results, judges each reply as a call
    /// would, and writes them to its results file; then records it
    /// collected. A run stopped before that downloads them again (the
    /// provider keeps them; nothing is paid twice).
    async fn collect<T, C>(
        &self,
        job: &mut JobDir,
        states: &mut [ChunkState],
        chunk: usize,
        check: &C,
    ) -> Result<(), Error>
    where
        T: DeserializeOwned + Serialize,
        C: ValueCheck<T>,
    {
        let Some(mut ended) = states[chunk].ended.clone() else {
            return Ok(());
        };
        let batch = states[chunk].batch.clone().unwrap_or_default();
        // Where the journal says the results are was checked before it was
        // recorded; a journal that holds a place that is not one (written
        // by an older vox, or by hand) is corrected from the engine.
        let bad = [&ended.output, &ended.errors]
            .into_iter()
            .flatten()
            .any(|location| self.engine.results_url(self.sender, location).is_err());
        if bad && !batch.is_empty() {
            let status = self.engine.status(self.sender, &batch, self.limit).await?;
            if !status.ended {
                return Err(Error::Batch(format!(
                    "the journal says batch {batch} (chunk {chunk}) has ended, but the batch                      engine says it is `{}`",
                    self.shown(&status.status)
                )));
            }
            record_ended(job, states, chunk, status)?;
            ended = states[chunk].ended.clone().unwrap_or_default();
        }
        let Ended { output, errors, .. } = ended;
        let ChunkPlan { first, count, .. } = self.plan.chunks[chunk];
        let mut log = ItemLog::open(&job.results_path(chunk), true)?;
        let mut accepted = 0;
        let mut replies = 0;
        for location in [output, errors].into_iter().flatten() {
            let body = self
                .engine
                .download(self.sender, &location, self.limit)
                .await?;
            for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let (index, outcome) = match self.engine.parse_line(self.prefix, line) {
                    Line::Ours(index, outcome) if (first..first + count).contains(&index) => {
                        (index, outcome)
                    }
                    Line::Unreadable => continue,
                    Line::Ours(index, _) => {
                        return Err(self.foreign(&batch, chunk, &format!("{}{index}", self.prefix)))
                    }
                    Line::Foreign(custom_id) => {
                        return Err(self.foreign(&batch, chunk, &custom_id));
                    }
                };
                replies += u64::from(matches!(outcome, Outcome::Reply(_)));
                let record = self.judge::<T, C>(index, outcome, check)?;
                accepted += u64::from(record.ok.is_some());
                log.push(&record, false)?;
            }
        }
        log.sync()?;
        job.record(&Event::Collected {
            chunk,
            replies: Some(replies),
        })?;
        states[chunk].collected = true;
        states[chunk].replies = Some(replies);
        tell(
            self.options,
            Progress::Collected {
                chunk,
                count,
                accepted,
            },
        );
        Ok(())
    }

    /// The error for a result line of batch `batch` that is not one of
    /// chunk `chunk`'s items: nothing of the batch is taken.
    fn foreign(&self, batch: &str, chunk: usize, custom_id: &str) -> Error {
        Error::Batch(format!(
            "batch {batch} (chunk {chunk}) holds a result for custom_id {:?}, which is not one of              this chunk's items ({}<index>): the batch is not this job's, or its engine mixed              jobs' results, so none of its results is taken. If the batch was recorded by hand,              remove its `batch` line from journal.jsonl in the job directory and run again",
            self.shown(custom_id),
            self.prefix
        ))
    }

    /// One batch reply through a call's path: the provider's response
    /// body, its content, parse and repair into `T`.
    fn judge<T, C>(&self, index: u64, outcome: Outcome, check: &C) -> Result<ItemRecord, Error>
    where
        T: DeserializeOwned + Serialize,
        C: ValueCheck<T>,
    {
        let mut record = ItemRecord {
            i: index,
            ok: None,
            rerun: None,
            err: None,
            repairs: None,
            sent: false,
        };
        let body = match outcome {
            Outcome::Reply(body) => body,
            Outcome::Failed(reason) => {
                record.rerun = Some(self.shown(&reason));
                return Ok(record);
            }
        };
        let answer = match parse_response(self.wire, body.get().as_bytes(), self.sender.redactor())
        {
            Ok(answer) => answer,
            Err(error) => {
                record.rerun = Some(self.shown(&self.sender.redact_malformed(error).to_string()));
                return Ok(record);
            }
        };
        let verdict = answer
            .content()
            .map_err(|r| r.error)
            .and_then(|content| parse_reply::<T>(content, self.output, self.repair));
        match verdict {
            Ok((value, repairs)) => {
                if let Err(problems) = check.check(&value) {
                    record.rerun = Some(self.shown(&problems));
                    return Ok(record);
                }
                let value = to_value(&value)?;
                let problems = match self.schema_root {
                    Some(root) => schema_problems(root, self.output, &value),
                    None => Vec::new(),
                };
                if let Some(problem) = problems.first() {
                    record.rerun = Some(self.shown(problem));
                    return Ok(record);
                }
                record.ok = Some(value);
                if !repairs.is_empty() {
                    record.repairs = Some(repairs.to_string());
                }
            }
            Err(error) => record.rerun = Some(self.shown(&error)),
        }
        Ok(record)
    }

    fn shown(&self, text: &str) -> String {
        self.sender.redactor().shown_message(text, LAST_ERROR_CHARS)
    }
}

/// Splits `inputs` into chunks within `limits` (requests, bytes), writing
/// each chunk's request lines and arguments as it goes: memory does not
/// grow with the number of inputs.
fn plan_chunks<I>(
    job: &JobDir,
    engine: Engine,
    prefix: &str,
    inputs: I,
    (max_requests, max_bytes): (u64, u64),
    render: impl Fn(&Args) -> Result<Bytes, Error>,
) -> Result<Vec<ChunkPlan>, Error>
where
    I: IntoIterator<Item = Result<Args, Error>>,
{
    struct Open {
        requests: BufWriter<File>,
        args: BufWriter<File>,
        paths: (PathBuf, PathBuf),
        plan: ChunkPlan,
    }
    fn close(open: Open, chunks: &mut Vec<ChunkPlan>) -> Result<(), Error> {
        for (writer, path) in [(open.requests, &open.paths.0), (open.args, &open.paths.1)] {
            let file = writer
                .into_inner()
                .map_err(|e| io_error("write", path, e.into_error()))?;
            file.sync_all().map_err(|e| io_error("sync", path, e))?;
        }
        chunks.push(open.plan);
        Ok(())
    }
    let create = |path: &Path| {
        File::create(path)
            .map(BufWriter::new)
            .map_err(|e| io_error("create", path, e))
    };
    let mut chunks = Vec::new();
    let mut open: Option<Open> = None;
    for (index, args) in (0u64..).zip(inputs) {
        let args = args?;
        let line = engine.request_line(prefix, index, &render(&args)?);
        if line.len() as u64 > max_bytes {
            return Err(Error::Batch(format!(
                "input {index}'s request is {} bytes, more than a batch may hold ({max_bytes})",
                line.len()
            )));
        }
        if let Some(current) = &open {
            if current.plan.count >= max_requests
                || current.plan.bytes + line.len() as u64 > max_bytes
            {
                if let Some(full) = open.take() {
                    close(full, &mut chunks)?;
                }
            }
        }
        let current = match &mut open {
            Some(current) => current,
            None => {
                let chunk = chunks.len();
                let paths = (job.requests_path(chunk), job.args_path(chunk));
                open.insert(Open {
                    requests: create(&paths.0)?,
                    args: create(&paths.1)?,
                    paths,
                    plan: ChunkPlan {
                        first: index,
                        count: 0,
                        bytes: 0,
                    },
                })
            }
        };
        current
            .requests
            .write_all(&line)
            .map_err(|e| io_error("write", &current.paths.0, e))?;
        current
            .args
            .write_all(args.as_json().as_bytes())
            .and_then(|()| current.args.write_all(b"\n"))
            .map_err(|e| io_error("write", &current.paths.1, e))?;
        current.plan.count += 1;
        current.plan.bytes += line.len() as u64;
    }
    if let Some(last) = open.take() {
        close(last, &mut chunks)?;
    }
    Ok(chunks)
}

/// A finished run of a package's own `@ai` function over many inputs:
/// what its generated `<function>_batch` returns (docs/runtime.md, "Bulk
/// runs"). The values stay in the job directory until read, in input
/// order, with [`BatchRun::results`].
#[derive(Debug, Clone)]
pub struct BatchRun<T> {
    /// What the run did.
    pub report: BatchReport,
    dir: PathBuf,
    _value: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> BatchRun<T> {
    /// The job directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The results in input order, read from the job directory one chunk
    /// at a time (see [`batch_results`]).
    pub fn results(&self) -> Result<BatchResults<T>, Error> {
        batch_results(&self.dir)
    }
}

/// Runs `function` over `inputs` on its provider's batch engine through
/// the process-wide default client, as [`crate::__private::call_ai`] makes one call:
/// what a generated `<function>_batch` calls (see [`Client::batch`]).
pub async fn batch_ai<T, I>(
    function: &'static AiFunction,
    dir: &Path,
    inputs: I,
    options: &BatchOptions,
) -> Result<BatchRun<T>, Error>
where
    T: DeserializeOwned + Serialize + Send,
    I: IntoIterator<Item = Result<Args, Error>>,
{
    let client = crate::client::default_client()?;
    let report = client
        .batch_with::<T, I, _>(function, dir, inputs, options, &NoCheck)
        .await?;
    Ok(BatchRun {
        report,
        dir: dir.to_owned(),
        _value: PhantomData,
    })
}

/// [`batch_ai`] with a check of each value: what a generated
/// `<function>_batch` of an `@ai(check = f)` function calls (see
/// [`Client::batch_checked`]).
pub async fn batch_ai_checked<T, I, C>(
    function: &'static AiFunction,
    dir: &Path,
    inputs: I,
    options: &BatchOptions,
    check: C,
) -> Result<BatchRun<T>, Error>
where
    T: DeserializeOwned + Serialize + Send,
    I: IntoIterator<Item = Result<Args, Error>>,
    C: Fn(&T) -> Vec<String> + Sync,
{
    let client = crate::client::default_client()?;
    let report = client
        .batch_with::<T, I, _>(function, dir, inputs, options, &FnCheck(check))
        .await?;
    Ok(BatchRun {
        report,
        dir: dir.to_owned(),
        _value: PhantomData,
    })
}

/// The results of the job in `dir`, in input order, one chunk in memory
/// at a time. An item without a value carries why: its re-run's error,
/// its batch error, or that the job has not finished.
pub fn batch_results<T: DeserializeOwned>(dir: &Path) -> Result<BatchResults<T>, Error> {
    let job = JobDir::read_only(dir);
    let plan = job
        .plan()?
        .ok_or_else(|| Error::Batch(format!("{} holds no planned job", dir.display())))?;
    Ok(BatchResults {
        job,
        plan,
        chunk: 0,
        next: 0,
        loaded: None,
        _value: PhantomData,
    })
}

/// The iterator [`batch_results`] returns.
pub struct BatchResults<T> {
    job: JobDir,
    plan: Plan,
    chunk: usize,
    next: u64,
    loaded: Option<(HashMap<u64, ItemRecord>, HashMap<u64, ItemRecord>)>,
    _value: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> Iterator for BatchResults<T> {
    type Item = Result<BatchItem<T>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let chunk = *self.plan.chunks.get(self.chunk)?;
            if self.next >= chunk.first + chunk.count {
                self.chunk += 1;
                self.loaded = None;
                continue;
            }
            self.next = self.next.max(chunk.first);
            if self.loaded.is_none() {
                let loaded = read_items(&self.job.results_path(self.chunk)).and_then(|results| {
                    Ok((results, read_items(&self.job.reruns_path(self.chunk))?))
                });
                match loaded {
                    Ok(loaded) => self.loaded = Some(loaded),
                    Err(e) => {
                        self.chunk = usize::MAX;
                        return Some(Err(e));
                    }
                }
            }
            let (results, reruns) = self.loaded.as_ref()?;
            let index = self.next;
            self.next += 1;
            let record = results
                .get(&index)
                .filter(|r| r.ok.is_some())
                .or_else(|| reruns.get(&index))
                .or_else(|| results.get(&index));
            let result = match record {
                Some(ItemRecord {
                    ok: Some(value), ..
                }) => serde_json::from_value::<T>(value.clone())
                    .map_err(|e| format!("the stored value does not read as the return type: {e}")),
                Some(ItemRecord { err: Some(e), .. }) => Err(e.clone()),
                Some(ItemRecord {
                    rerun: Some(reason),
                    ..
                }) => Err(format!("not re-run; the batch's reply: {reason}")),
                _ => Err("no result yet: the job has not finished".to_owned()),
            };
            return Some(Ok(BatchItem { index, result }));
        }
    }
}

/// What is wrong with `value` (a value of `output`'s type, unwrapped)
/// against the strict schema `root`: one correction, or none.
fn schema_problems(
    root: &serde_json::Value,
    output: &OutputSchema,
    value: &serde_json::Value,
) -> Vec<String> {
    let wrapped;
    let checked = if output.is_wrapped() {
        wrapped = serde_json::json!({ "value": value });
        &wrapped
    } else {
        value
    };
    let problems = correction::check(root, checked).problems;
    if problems.is_empty() {
        Vec::new()
    } else {
        vec![correction::describe(&problems)]
    }
}

fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::Batch(format!("could not store a value: {e}")))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A new job id: 128 random bits in hex (32 characters). std's
/// `RandomState` is seeded from the operating system's random source once
/// per process and stepped for each new one; the time and process are
/// hashed in too.
fn new_job_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

/// Records that chunk `chunk`'s batch ended as `status` says.
fn record_ended(
    job: &mut JobDir,
    states: &mut [ChunkState],
    chunk: usize,
    status: engine::Status,
) -> Result<(), Error> {
    let ended = Ended {
        status: status.status,
        output: status.output,
        errors: status.errors,
        failure: status.failure,
    };
    job.record(&Event::Ended {
        chunk,
        status: ended.status.clone(),
        output: ended.output.clone(),
        errors: ended.errors.clone(),
        failure: ended.failure.clone(),
    })?;
    states[chunk].ended = Some(ended);
    Ok(())
}

/// Stops a run, before it re-runs anything, when a batch failed as a whole
/// (OpenAI `failed`, or results without a single response): re-running
/// every item at full price is not what the estimate said.
fn whole_failures(plan: &Plan, states: &[ChunkState]) -> Result<(), Error> {
    let failed: Vec<String> = states
        .iter()
        .zip(&plan.chunks)
        .enumerate()
        .filter_map(|(chunk, (state, planned))| {
            let ended = state.ended.as_ref()?;
            let whole = state.collected
                && planned.count > 0
                && (ended.status == "failed" || state.replies == Some(0));
            whole.then(|| {
                let why = match &ended.failure {
                    Some(failure) if !failure.is_empty() => format!(": {failure}"),
                    _ => String::new(),
                };
                format!(
                    "batch {} (chunk {chunk}, {} items) ended `{}` with no response{why}",
                    state.batch.as_deref().unwrap_or("?"),
                    planned.count,
                    ended.status
                )
            })
        })
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    Err(Error::Batch(format!(
        "{}; its items were not re-run, since each re-run is a normal call at the provider's          full price (twice the batch price). Fix the cause and start the job in a new          directory, or run again with `rerun_failed_batches` (`cargo vox batch          --rerun-failed`) to re-run them, at most `max_reruns` (`--max-reruns`)",
        failed.join("; ")
    )))
}
