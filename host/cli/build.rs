//! Builds warpsort's kernels for the `custom_key` example's `Trade` (the
//! benchmark's user key row), as a user's `build.rs` would.
fn main() {
    warpsort_build::Kernels::for_key("../../examples/custom_key/key", "Trade").name("trade").build_or_exit();
}
