//! A streamed `@ai` call as the program sees it: [`AiStream`], a
//! `futures_core::Stream` of [`StreamEvent`]s, and the [`Tap`] the call
//! path reports to while it runs.

use std::collections::VecDeque;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use serde::de::DeserializeOwned;

use super::partial::PartialParser;
use crate::error::Error;

/// What a streamed call ([`AiStream`]) yields: partial values while a
/// reply arrives, a retry when an attempt was rejected, and at the end the
/// call's outcome — the same value or error the plain call gives for the
/// same replies (docs/runtime.md, "Streaming").
#[derive(Debug)]
pub enum StreamEvent<P, T> {
    /// The value as far as the reply of attempt `attempt` (1, 2, …,
    /// counted across fallbacks) shows it: `P` is the return type's
    /// generated partial type (`Partial<Name>`), whose fields are absent
    /// until seen. Each partial of an attempt is a state of the next one.
    Partial { attempt: u32, value: P },
    /// Attempt `attempt` was rejected (`reason` is what the correction
    /// tells the model) or its provider failed over: what its partials
    /// showed is void, and the next attempt streams afresh.
    Retry { attempt: u32, reason: String },
    /// The call's outcome; the stream ends after it.
    Done(Result<T, Error>),
}

/// Events the call path queued, before they are typed.
#[derive(Debug)]
enum RawEvent {
    /// A partial as JSON text (docs: [`PartialParser::partial_text`]).
    Partial {
        attempt: u32,
        text: String,
    },
    Retry {
        attempt: u32,
        reason: String,
    },
}

/// A reply's first this many bytes show every change.
const EVERY_CHANGE_BYTES: usize = 4096;

/// Past [`EVERY_CHANGE_BYTES`], the least time between two partials.
const PARTIAL_INTERVAL: Duration = Duration::from_millis(50);

/// Past [`EVERY_CHANGE_BYTES`], the least time between two partials is
/// also this many times what making the last one took, so that making
/// partials takes at most a fifth of the stream's time whatever the size.
const PARTIAL_COST_FACTOR: u32 = 4;

/// Where a streamed call reports what it sees: each attempt's content so
/// far is parsed as it arrives (work linear in the reply), and a partial
/// value is made from it when the program asks for the next event — at
/// most one per new piece of content over a reply's first 4 KiB, then at
/// most one per 50 ms (or four times what the last one took to make, if
/// more), so that making partials costs a bounded share of the stream's
/// time however finely it is chunked and however long the reply
/// (docs/runtime.md, "Streaming"). A rejected attempt is a retry.
pub(crate) struct Tap {
    schema: serde_json::Value,
    /// Whether the value is wrapped in `{"value": …}` (a return type that
    /// is not a record).
    wrapped: bool,
    state: Mutex<TapState>,
}

struct TapState {
    queue: VecDeque<RawEvent>,
    attempt: u32,
    parser: Option<PartialParser>,
    /// How much of the attempt's content the parser has been given.
    fed: usize,
    /// How much of it the last partial shown was made from.
    shown: usize,
    /// The attempt's content is complete: its outcome, not a partial,
    /// shows the rest.
    ended: bool,
    /// When the last partial was shown and what making it took.
    last_at: Option<Instant>,
    last_cost: Duration,
    /// The version ([`PartialParser::version`]) of the last partial
    /// shown, to show only changes.
    last: Option<u64>,
    /// The text of the partial being made, kept to reuse its allocation.
    scratch: String,
}

/// What [`Tap::pop`] hands over: an event, its partial typed.
enum Popped<P> {
    Partial {
        attempt: u32,
        value: Option<Result<P, serde_json::Error>>,
    },
    Retry {
        attempt: u32,
        reason: String,
    },
}

impl TapState {
    /// When a partial is due (`None`: none is): there is new content, and
    /// the reply is within its first [`EVERY_CHANGE_BYTES`] (due now), or
    /// else the attempt goes on and the interval since the last partial
    /// ends then.
    fn due_at(&self) -> Option<Due> {
        if self.parser.is_none() || self.fed <= self.shown {
            return None;
        }
        if self.shown < EVERY_CHANGE_BYTES {
            return Some(Due::Now);
        }
        if self.ended {
            return None;
        }
        let Some(last) = self.last_at else {
            return Some(Due::Now);
        };
        let wait = PARTIAL_INTERVAL.max(self.last_cost * PARTIAL_COST_FACTOR);
        Some(Due::At(last + wait))
    }

    /// Whether a partial is due now.
    fn due(&self) -> bool {
        match self.due_at() {
            None => false,
            Some(Due::Now) => true,
            Some(Due::At(at)) => at <= Instant::now(),
        }
    }
}

/// When the program should next be handed an event.
#[derive(Debug, Clone, Copy)]
enum Due {
    Now,
    /// Once this instant has passed.
    At(Instant),
}

impl Tap {
    pub fn new(schema_json: &str, wrapped: bool) -> Tap {
        Tap {
            schema: serde_json::from_str(schema_json).unwrap_or(serde_json::Value::Null),
            wrapped,
            state: Mutex::new(TapState {
                queue: VecDeque::new(),
                attempt: 0,
                parser: None,
                fed: 0,
                shown: 0,
                ended: false,
                last_at: None,
                last_cost: Duration::ZERO,
                last: None,
                scratch: String::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TapState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new attempt begins: its partials start from nothing.
    pub fn begin(&self) {
        let mut state = self.state();
        state.attempt += 1;
        state.parser = Some(PartialParser::new(&self.schema));
        state.fed = 0;
        state.shown = 0;
        state.ended = false;
        state.last_at = None;
        state.last = None;
    }

    /// The current attempt's content is now `content` (what came before
    /// and more): the new text is parsed.
    pub fn content(&self, content: &str) {
        let mut state = self.state();
        let state = &mut *state;
        if content.len() < state.fed || !content.is_char_boundary(state.fed) {
            // The content was replaced (a tool block after text): anew.
            state.parser = Some(PartialParser::new(&self.schema));
            state.fed = 0;
            state.shown = 0;
            state.last = None;
        }
        let Some(parser) = state.parser.as_mut() else {
            return;
        };
        if content.len() > state.fed {
            // Read when a partial is made (`snapshot`), from where the
            // parser left off.
            parser.append(&content[state.fed..]);
            state.fed = content.len();
        }
    }

    /// The current attempt's content is complete: past its first 4 KiB, no
    /// more partial is made (its outcome follows).
    pub fn end(&self) {
        self.state().ended = true;
    }

    /// Whether the program has an event to take now.
    pub fn waiting(&self) -> bool {
        let state = self.state();
        !state.queue.is_empty() || state.due()
    }

    /// When the program should be handed an event: now, later, or not
    /// before more happens (`None`).
    fn wake_at(&self) -> Option<Due> {
        let state = self.state();
        if !state.queue.is_empty() {
            return Some(Due::Now);
        }
        state.due_at()
    }

    /// `text` as if it arrived in pieces of about `piece` bytes (a replayed
    /// or fixture answer, which has no chunks of its own): every piece is
    /// shown, as a program polling after each would see it.
    pub fn replay(&self, text: &str, piece: usize) {
        self.begin();
        let mut end = 0;
        while end < text.len() {
            end = (end + piece.max(1)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            self.content(&text[..end]);
            let mut state = self.state();
            if let Some((attempt, text)) = Self::snapshot(&mut state, str::to_owned) {
                state.queue.push_back(RawEvent::Partial { attempt, text });
            }
        }
    }

    /// The current attempt was rejected (or failed over) for `reason`.
    pub fn retry(&self, reason: &str) {
        let mut state = self.state();
        let attempt = state.attempt;
        if attempt == 0 {
            return;
        }
        state.queue.push_back(RawEvent::Retry {
            attempt,
            reason: reason.to_owned(),
        });
        // What the attempt did not show yet is void with it.
        state.parser = None;
        state.last = None;
    }

    /// The next event: one queued, else a partial if one is due, typed
    /// as `P` straight from the parser's state.
    fn pop<P: DeserializeOwned>(&self) -> Option<Popped<P>> {
        let mut state = self.state();
        let wrapped = self.wrapped;
        if let Some(event) = state.queue.pop_front() {
            return Some(match event {
                RawEvent::Partial { attempt, text } => Popped::Partial {
                    attempt,
                    value: typed(&text, wrapped),
                },
                RawEvent::Retry { attempt, reason } => Popped::Retry { attempt, reason },
            });
        }
        if !state.due() {
            return None;
        }
        // Past the first 4 KiB partials are paced by what they cost.
        let timed = state.shown >= EVERY_CHANGE_BYTES || state.fed >= EVERY_CHANGE_BYTES;
        let start = timed.then(Instant::now);
        let (attempt, value) = Self::snapshot(&mut state, |text| typed(text, wrapped))?;
        if let Some(start) = start {
            let now = Instant::now();
            state.last_at = Some(now);
            state.last_cost = now - start;
        }
        Some(Popped::Partial { attempt, value })
    }

    /// The partial of the content so far, made by `make` from its JSON
    /// text, if it shows something new; with the attempt it belongs to.
    fn snapshot<R>(state: &mut TapState, make: impl FnOnce(&str) -> R) -> Option<(u32, R)> {
        let TapState {
            parser,
            fed,
            shown,
            last,
            attempt,
            scratch,
            ..
        } = state;
        let parser = parser.as_mut()?;
        parser.catch_up();
        *shown = *fed;
        let version = parser.version();
        if *last == Some(version) {
            return None;
        }
        scratch.clear();
        if !parser.partial_text(scratch) {
            return None;
        }
        *last = Some(version);
        Some((*attempt, make(scratch)))
    }
}

/// A return type that is not a record, as its schema wraps it.
#[derive(serde::Deserialize)]
struct Wrapped<P> {
    value: Option<P>,
}

/// The partial of `text` typed as `P` (`None` when a wrapped value has not
/// begun to show).
fn typed<P: DeserializeOwned>(text: &str, wrapped: bool) -> Option<Result<P, serde_json::Error>> {
    if wrapped {
        serde_json::from_str::<Wrapped<P>>(text)
            .map(|w| w.value)
            .transpose()
    } else {
        Some(serde_json::from_str(text))
    }
}

/// A call's future, boxed so that [`AiStream`] is one type for every
/// function.
type CallFuture<T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'static>>;

/// A streamed `@ai` call: what `f_stream(…)` returns. A
/// `futures_core::Stream` of [`StreamEvent`]s — partial values while the
/// reply arrives, retries, then [`StreamEvent::Done`] with the outcome —
/// that does nothing until polled (no `await` is needed to get it).
/// Dropping it cancels the call: the connection is closed and its
/// concurrency slot freed at once.
///
/// ```no_run
/// # async fn show(mut stream: vox_runtime::AiStream<serde_json::Value, i64>) -> Result<i64, vox_runtime::Error> {
/// use vox_runtime::StreamEvent;
/// while let Some(event) = stream.next().await {
///     match event {
///         StreamEvent::Partial { value, .. } => println!("so far: {value:?}"),
///         StreamEvent::Retry { reason, .. } => println!("(starting over: {reason})"),
///         StreamEvent::Done(result) => return result,
///     }
/// }
/// # unreachable!()
/// # }
/// ```
pub struct AiStream<P, T> {
    call: Option<CallFuture<T>>,
    tap: Option<Arc<Tap>>,
    /// Wakes the program when a partial falls due while nothing else
    /// happens (the interval past a reply's first 4 KiB).
    timer: Option<Pin<Box<Sleep>>>,
    result: Option<Result<T, Error>>,
    done: bool,
    _partial: PhantomData<fn() -> P>,
}

// Nothing in an `AiStream` is pinned but the boxed call future.
impl<P, T> Unpin for AiStream<P, T> {}

impl<P, T> std::fmt::Debug for AiStream<P, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AiStream")
            .field("running", &self.call.is_some())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<P: DeserializeOwned, T> AiStream<P, T> {
    pub(crate) fn new(call: CallFuture<T>, tap: Arc<Tap>) -> AiStream<P, T> {
        AiStream {
            call: Some(call),
            tap: Some(tap),
            timer: None,
            result: None,
            done: false,
            _partial: PhantomData,
        }
    }

    /// A stream whose only event is `Done(Err(error))` (the call could not
    /// start: an argument that does not serialize, no client).
    pub fn failed(error: Error) -> AiStream<P, T> {
        AiStream {
            call: None,
            tap: None,
            timer: None,
            result: Some(Err(error)),
            done: false,
            _partial: PhantomData,
        }
    }

    /// The next event (`None` after [`StreamEvent::Done`]): the stream's
    /// `poll_next` as a future, so no extension trait is needed.
    pub async fn next(&mut self) -> Option<StreamEvent<P, T>> {
        std::future::poll_fn(|cx| futures_core::Stream::poll_next(Pin::new(&mut *self), cx)).await
    }

    /// Runs the call to its end, skipping the partials: the outcome.
    pub async fn finish(mut self) -> Result<T, Error> {
        while let Some(event) = self.next().await {
            if let StreamEvent::Done(result) = event {
                return result;
            }
        }
        Err(Error::MalformedResponse(
            "internal error: a streamed call ended without an outcome".into(),
        ))
    }

    fn typed(popped: Popped<P>) -> Option<StreamEvent<P, T>> {
        match popped {
            Popped::Partial { attempt, value } => match value? {
                Ok(value) => Some(StreamEvent::Partial { attempt, value }),
                // The partial rules keep every partial within the partial
                // type; one that is not is skipped, never shown wrong.
                Err(e) => {
                    tracing::debug!(error = %e, "vox.ai_stream_partial_skipped");
                    None
                }
            },
            Popped::Retry { attempt, reason } => Some(StreamEvent::Retry { attempt, reason }),
        }
    }
}

impl<P: DeserializeOwned, T> futures_core::Stream for AiStream<P, T> {
    type Item = StreamEvent<P, T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(raw) = this.tap.as_ref().and_then(|t| t.pop::<P>()) {
                match Self::typed(raw) {
                    Some(event) => return Poll::Ready(Some(event)),
                    None => continue,
                }
            }
            if let Some(result) = this.result.take() {
                this.done = true;
                this.tap = None;
                return Poll::Ready(Some(StreamEvent::Done(result)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            let Some(call) = this.call.as_mut() else {
                this.done = true;
                return Poll::Ready(None);
            };
            match call.as_mut().poll(cx) {
                Poll::Ready(result) => {
                    this.call = None;
                    this.result = Some(result);
                }
                Poll::Pending => {
                    let due = this.tap.as_ref().and_then(|t| t.wake_at());
                    let at = match due {
                        None => return Poll::Pending,
                        Some(Due::Now) => continue,
                        Some(Due::At(at)) => at,
                    };
                    if at > Instant::now() {
                        let timer = this
                            .timer
                            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                        timer.as_mut().reset(at);
                        if timer.as_mut().poll(cx).is_pending() {
                            return Poll::Pending;
                        }
                    }
                }
            }
        }
    }
}
