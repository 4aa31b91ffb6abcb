//! The `warpsort` command's library: its command line ([`cli`]), the
//! benchmark beside NVIDIA CUB ([`bench`]), file sorting ([`sort`]) and the
//! start-up probe the benchmark runs as a child ([`startup`]).

#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod sort;
pub mod startup;
