//! One process per GPU: the launcher (this program without
//! `WARPSORT_RANK`) makes an NCCL id and starts one copy of itself per GPU
//! with `WARPSORT_RANK`, `WARPSORT_RANKS` and `WARPSORT_NCCL_ID` set, as
//! `mpirun` or a cluster scheduler would; each rank sorts its keys with the
//! others' and writes its share into `WARPSORT_OUT/RANK.bin`; the launcher
//! checks that the shares, in rank order, are the sorted keys.
//!
//! ```text
//! cargo run --release -p warpsort-examples --bin distributed_ranks -- [KEYS_PER_RANK]
//! ```

use std::path::PathBuf;
use std::process::Command;

use warpsort::{DistOptions, Gpu, NcclId, Peer};

/// Rank `r`'s keys: `n` pseudo-random `u32`s from its own seed.
fn keys(rank: usize, n: usize) -> Vec<u32> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (rank as u64 + 1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1 << 22), |a| a.parse())?;
    match std::env::var("WARPSORT_RANK") {
        Ok(rank) => rank_main(rank.parse()?, n),
        Err(_) => launcher(n),
    }
}

/// One rank: join the group, sort, write the share.
fn rank_main(rank: usize, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let ranks: usize = std::env::var("WARPSORT_RANKS")?.parse()?;
    let id = NcclId::from_hex(&std::env::var("WARPSORT_NCCL_ID")?)?;
    let gpu = Gpu::with_device(rank % Gpu::device_count()?)?;
    let peer = Peer::new(gpu, &id, rank, ranks)?;
    let keys = peer.gpu().stream().clone_htod(&keys(rank, n))?;
    let share = peer.sort(&keys, &DistOptions::default())?;
    let share = peer.gpu().stream().clone_dtoh(&share)?;
    let out = PathBuf::from(std::env::var("WARPSORT_OUT")?).join(format!("{rank}.bin"));
    std::fs::write(out, share.iter().flat_map(|k| k.to_le_bytes()).collect::<Vec<u8>>())?;
    let report = peer.last_report().expect("a report");
    println!("rank {rank}/{ranks}: {} keys, {:.1} ms", share.len(), report.wall_ms);
    Ok(())
}

/// The launcher: one process per GPU, then the check.
fn launcher(n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let ranks = Gpu::device_count()?;
    let id = NcclId::new()?.to_hex();
    let out = std::env::temp_dir().join(format!("warpsort-ranks-{}", std::process::id()));
    std::fs::create_dir_all(&out)?;
    let me = std::env::current_exe()?;
    let children = (0..ranks)
        .map(|rank| {
            Command::new(&me)
                .arg(n.to_string())
                .env("WARPSORT_RANK", rank.to_string())
                .env("WARPSORT_RANKS", ranks.to_string())
                .env("WARPSORT_NCCL_ID", &id)
                .env("WARPSORT_OUT", &out)
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    for mut c in children {
        if !c.wait()?.success() {
            return Err("a rank failed".into());
        }
    }
    let mut got = Vec::new();
    for rank in 0..ranks {
        let bytes = std::fs::read(out.join(format!("{rank}.bin")))?;
        got.extend(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    }
    std::fs::remove_dir_all(&out)?;
    let mut want: Vec<u32> = (0..ranks).flat_map(|r| keys(r, n)).collect();
    want.sort_unstable();
    assert!(got == want, "the ranks' shares are not the sorted keys");
    println!("{ranks} rank(s) sorted {} keys: checked", want.len());
    Ok(())
}
