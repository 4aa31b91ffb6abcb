//! The harness of the integration tests (`harness = false`, on
//! [libtest-mimic](https://docs.rs/libtest-mimic)): each test binary's `main`
//! ([`tests_main!`](crate::tests_main), or [`run`]) lists its tests. GPU
//! tests take the binary's one [`Gpu`]; CPU tests take nothing and run
//! everywhere.
//!
//! The GPU is opened once, before any test runs ([`crate::gpu`]). Where none
//! answers, every GPU test is reported *ignored* (with the `SKIPPED` notice
//! saying why), and one forced with `--ignored` or `--include-ignored` fails
//! with "no GPU" rather than passing; with `WARPSORT_REQUIRE_GPU=1` the
//! missing GPU panics the binary instead (exit status 101, before any test).
//!
//! Arguments and output are libtest's: `--list`, `--exact`, name filters,
//! `--skip`, `--ignored`, `--include-ignored`, `--test-threads` (else
//! `RUST_TEST_THREADS`, else one thread per core); `test NAME ... ok` lines
//! (names padded to one width) in name order, and the `test result: ok. N
//! passed; N failed; N ignored; N measured; N filtered out; finished in Xs`
//! summary. Each test runs on a thread of its own named after it, as under
//! libtest; a test's panic fails that test, and its report (`thread 'NAME'
//! panicked at FILE:LINE:COL:`, the message, a backtrace under
//! `RUST_BACKTRACE=1`) is printed with the failures at the end. Unlike
//! libtest, nothing a test prints is captured: it shows as the test runs.

use std::backtrace::{Backtrace, BacktraceStatus};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::Once;
use std::thread;

use libtest_mimic::{Arguments, Failed, Trial};
use warpsort::Gpu;

/// A GPU test's function.
pub type GpuFn = fn(&Gpu);
/// A GPU test: its name and its function.
pub type GpuTest = (&'static str, GpuFn);
/// A CPU test: its name and its function.
pub type CpuTest = (&'static str, fn());

/// Runs a test binary's tests, GPU tests ignored where there is no GPU (see
/// the [module](self)); the binary's exit status: 0, or 101 when a test failed.
pub fn run(gpu_tests: &[GpuTest], cpu_tests: &[CpuTest]) -> ExitCode {
    let mut args = Arguments::from_args();
    if args.test_threads.is_none() {
        args.test_threads = std::env::var("RUST_TEST_THREADS").ok().and_then(|n| n.parse().ok()).filter(|&n| n > 0);
    }
    install_panic_hook();
    let mut trials: Vec<Trial> =
        cpu_tests.iter().map(|&(name, test)| Trial::test(name, move || on_own_thread(name, test))).collect();
    if !gpu_tests.is_empty() {
        // Whether the GPU tests run is decided here, once: a panic here
        // (a GPU required but absent) ends the binary before any test.
        let gpu = crate::open_gpu();
        trials.extend(gpu_tests.iter().map(|&(name, test)| match gpu {
            Ok(g) => Trial::test(name, move || on_own_thread(name, move || test(g))),
            Err(why) => Trial::test(name, move || Err(format!("no GPU: {why}").into())).with_ignored_flag(true),
        }));
    }
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    if let Some(w) = trials.windows(2).find(|w| w[0].name() == w[1].name()) {
        panic!("test {} is listed twice", w[0].name());
    }
    libtest_mimic::run(&args, trials).exit_code()
}

/// `main` of a test binary: `tests_main! { gpu: [a, b], cpu: [c] }` (either
/// list may be left out) runs GPU tests `fn a(g: &Gpu)` and CPU tests
/// `fn c()`, each under its function's name, through [`harness::run`](crate::harness::run).
#[macro_export]
macro_rules! tests_main {
    ($(gpu: [$($gpu:ident),* $(,)?] $(,)?)? $(cpu: [$($cpu:ident),* $(,)?] $(,)?)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::harness::run(
                &[$($((::core::stringify!($gpu), $gpu as $crate::harness::GpuFn)),*)?],
                &[$($((::core::stringify!($cpu), $cpu as fn())),*)?],
            )
        }
    };
}

thread_local! {
    /// Whether this thread is a test's own (its panics are reported with the test).
    static IN_TEST: Cell<bool> = const { Cell::new(false) };
    /// The report of this test thread's latest panic.
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `test` on a thread named `name`; its panic is its failure, reported
/// as the default panic hook would have printed it.
fn on_own_thread(name: &'static str, test: impl FnOnce() + Send + 'static) -> Result<(), Failed> {
    let thread = thread::Builder::new().name(name.to_owned()).spawn(move || {
        IN_TEST.set(true);
        panic::catch_unwind(AssertUnwindSafe(test)).map_err(|payload| {
            let what = payload.downcast_ref::<&str>().copied().or(payload.downcast_ref::<String>().map(|s| &s[..]));
            PANIC.take().unwrap_or_else(|| format!("test panicked: {}", what.unwrap_or("(no message)"))).into()
        })
    });
    match thread {
        Ok(t) => t.join().unwrap_or_else(|_| Err("the test's thread panicked outside the test".into())),
        Err(e) => Err(format!("no thread for the test: {e}").into()),
    }
}

/// A panic hook that keeps a test thread's panic report for its failure (the
/// report of a panic the test catches itself is dropped with it) and leaves
/// every other thread's panics to the default hook.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_TEST.get() {
                return default(info);
            }
            let mut report = format!("thread '{}' {info}", thread::current().name().unwrap_or("<unnamed>"));
            let backtrace = Backtrace::capture();
            match backtrace.status() {
                BacktraceStatus::Captured => report += &format!("\nstack backtrace:\n{backtrace}"),
                BacktraceStatus::Disabled => {
                    report += "\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
                }
                _ => {}
            }
            PANIC.set(Some(report));
        }));
    });
}
