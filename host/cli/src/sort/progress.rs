//! A progress bar on stderr for long work (reading, sorting, writing), shown
//! only when stderr is a terminal and the input is large.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs from this size on show progress.
pub const SHOW_FROM_BYTES: u64 = 256 << 20;

/// Bytes read or written between progress updates.
pub const CHUNK: usize = 64 << 20;

/// The bar of one `warpsort sort` (hidden when not shown).
pub struct Progress {
    bar: ProgressBar,
    /// The host sort's phase the bar shows.
    sorting: Mutex<Option<warpsort::Phase>>,
}

impl Progress {
    /// A bar for an input of `bytes`: drawn when stderr is a terminal and
    /// `bytes` is at least [`SHOW_FROM_BYTES`].
    pub fn for_input(bytes: u64) -> Progress {
        let shown = bytes >= SHOW_FROM_BYTES && std::io::stderr().is_terminal();
        let target = if shown { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        Progress { bar: ProgressBar::with_draw_target(None, target), sorting: Mutex::new(None) }
    }

    /// A bar never drawn.
    pub fn hidden() -> Progress {
        Progress { bar: ProgressBar::hidden(), sorting: Mutex::new(None) }
    }

    /// A phase that moves `bytes` (a bar), or of unknown length (a spinner).
    pub fn phase(&self, name: &str, bytes: Option<u64>) {
        self.bar.reset();
        self.bar.disable_steady_tick();
        let style = match bytes {
            Some(len) => {
                self.bar.set_length(len);
                ProgressStyle::with_template("{msg:>9} [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec}")
            }
            None => {
                self.bar.enable_steady_tick(Duration::from_millis(120));
                ProgressStyle::with_template("{msg:>9} {spinner} {elapsed}")
            }
        };
        self.bar.set_style(style.expect("valid template").progress_chars("=> "));
        self.bar.set_message(name.to_string());
    }

    /// A host sort's report: a bar per phase (upload, download; runs,
    /// merge beyond the GPU), at the bytes it has moved.
    pub fn host_sort(&self, p: warpsort::Progress) {
        let mut shown = self.sorting.lock().unwrap_or_else(|e| e.into_inner());
        if *shown != Some(p.phase) {
            *shown = Some(p.phase);
            self.phase(p.phase.name(), Some(p.total));
        }
        self.bar.set_position(p.done);
    }

    /// `n` more bytes done.
    pub fn inc(&self, n: usize) {
        self.bar.inc(n as u64);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
