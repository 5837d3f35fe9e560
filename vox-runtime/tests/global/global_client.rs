//! The process-wide client behind `vox_runtime::__private::call_ai`. This
//! test binary owns its process, and the test runs alone in it, so
//! configuring the global client here races with nothing.

use vox_runtime::__private::{AiFunction, Args, OutputSchema};
use vox_runtime::{Config, Error, Provider};

static COUNT_SCHEMA: OutputSchema = OutputSchema::new(
    "int",
    r#"{"type":"object","properties":{"value":{"type":"integer"}},"required":["value"],"additionalProperties":false}"#,
    true,
);

static COUNT: AiFunction = AiFunction::new("count", "Count the items.", &COUNT_SCHEMA);

/// What generated code for `@ai fn count() to int { return 3 }` looks like.
async fn count() -> Result<i64, Error> {
    vox_runtime::__private::call_ai(&COUNT, Args::new(), async { Ok(3) }).await
}

#[test]
fn configure_once_then_call_through_the_default_client() {
    let _exclusive = crate::exclusive_blocking();
    vox_runtime::configure(Config::builder(Provider::Fixture).build().unwrap()).unwrap();
    assert_eq!(vox_runtime::block_on(count()), Ok(3));
    assert_eq!(
        vox_runtime::default_client().unwrap().config().provider(),
        Provider::Fixture
    );

    let again = vox_runtime::configure(Config::builder(Provider::Fixture).build().unwrap());
    assert!(matches!(again, Err(Error::Config(m)) if m.contains("already configured")));
}
