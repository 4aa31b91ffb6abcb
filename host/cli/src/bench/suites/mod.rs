//! One function per benchmark suite; [`run`] picks it.

mod basic;
mod choice;
mod custom;
mod host;
mod multigpu;
mod paper;
mod presorted;
mod segments;
mod startup;
mod steps;
mod tune;
mod tune_sample;
mod types;

use super::{Bench, Result, Suite};

/// Runs one suite.
pub fn run(suite: Suite, b: &mut Bench) -> Result<()> {
    match suite {
        Suite::Copy => basic::copy(b),
        Suite::Warp => basic::warp(b),
        Suite::Segments => segments::segments(b),
        Suite::Sizes => basic::sizes(b),
        Suite::Naive => basic::naive(b),
        Suite::Dists => basic::dists(b),
        Suite::Presorted => presorted::presorted(b),
        Suite::Types => types::types(b),
        Suite::Values => types::values(b),
        Suite::Choice => choice::choice(b),
        Suite::Custom => custom::custom(b),
        Suite::Tune => tune::tune(b),
        Suite::TuneSample => tune_sample::tune_sample(b),
        Suite::Steps => steps::steps(b),
        Suite::Paper => paper::paper_suite(b),
        Suite::Startup => startup::startup(b),
        Suite::Multigpu => multigpu::multigpu(b),
        Suite::Host => host::host(b),
        Suite::Outofcore => host::outofcore(b),
    }
}
