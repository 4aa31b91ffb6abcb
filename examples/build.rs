//! Builds warpsort's kernels for the key types of `custom_key/key` (the
//! `custom_key` example): one PTX per type.
fn main() {
    warpsort_build::Kernels::for_key("custom_key/key", "Trade").name("trade").build_or_exit();
    warpsort_build::Kernels::for_key("custom_key/key", "Hand").name("hand").build_or_exit();
}
