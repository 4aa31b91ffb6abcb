//! `cargo xtask plot RESULTS.jsonl OUT_DIR`: the benchmark's rows as CSV and
//! as SVG charts a reader can open in a browser, one per benchmark suite:
//! sorting rate against n (one line per algorithm and kind, as the paper's
//! Fig. 9), and grouped bars for the suites that compare cases at one size
//! (distributions as Fig. 10, segment kernels, tuning, ...).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

/// One benchmark row (the fields `warpsort bench` writes; others ignored).
#[derive(Clone, Debug, Deserialize)]
pub struct Row {
    pub suite: String,
    pub algo: String,
    pub dtype: String,
    pub pairs: bool,
    pub dist: String,
    pub n: u64,
    pub ms: f64,
    pub keys_per_s: f64,
    pub verified: bool,
    #[serde(default)]
    gpu: String,
}

/// Parses the rows of a `results.jsonl` (one JSON object a line; blank lines skipped).
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}: {l}", i + 1)))
        .collect()
}

/// Suites whose charts show the time (ms) rather than the sorting rate.
fn charts_time(suite: &str) -> bool {
    matches!(suite, "fig14" | "startup")
}

fn kind(r: &Row) -> &'static str {
    if r.pairs { "pairs" } else { "keys" }
}

const COLORS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
/// Chart size and margins (pixels).
const W: f64 = 760.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 70.0;

fn header(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
        (LEFT + W - RIGHT) / 2.0,
        escape(title)
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The y axis (`label`, from 0 to a round maximum) with grid lines.
fn y_axis(svg: &mut String, max: f64, label: &str) -> f64 {
    // 1, 2, 5, 10, 20, 50, ...: the first step that needs at most 8 lines.
    let step = (0..).map(|i| [1.0, 2.0, 5.0][i % 3] * 10f64.powi(i as i32 / 3)).find(|s| max / s <= 8.0).unwrap();
    let top = (max / step).ceil().max(1.0) * step;
    let mut v = 0.0;
    while v <= top + 1e-9 {
        let y = TOP + (H - TOP - BOTTOM) * (1.0 - v / top);
        let _ = writeln!(svg, "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#ddd\"/>", W - RIGHT);
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{v}</text>", LEFT - 6.0, y + 4.0);
        v += step;
    }
    let _ = writeln!(
        svg,
        "<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{label}</text>",
        (TOP + H - BOTTOM) / 2.0
    );
    top
}

fn legend(svg: &mut String, names: &[String]) {
    for (i, name) in names.iter().enumerate() {
        let y = TOP + 10.0 + 18.0 * i as f64;
        let x = W - RIGHT + 12.0;
        let _ =
            writeln!(svg, "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>", y - 10.0, COLORS[i % 8]);
        let _ = writeln!(svg, "<text x=\"{}\" y=\"{y}\">{}</text>", x + 18.0, escape(name));
    }
}

/// `label` (the y value) against log2(n), a line per series.
fn line_chart(title: &str, label: &str, series: &BTreeMap<String, Vec<(u64, f64)>>) -> String {
    let mut svg = header(title);
    let max = series.values().flatten().map(|p| p.1).fold(0.0, f64::max);
    let top = y_axis(&mut svg, max, label);
    let logs: Vec<f64> = series.values().flatten().map(|p| (p.0 as f64).log2()).collect();
    let (lo, hi) = (logs.iter().cloned().fold(f64::MAX, f64::min), logs.iter().cloned().fold(0.0, f64::max));
    let span = (hi - lo).max(1.0);
    let x_of = |n: u64| LEFT + (W - LEFT - RIGHT) * (((n as f64).log2() - lo) / span);
    let y_of = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - v / top);
    let mut k = lo.ceil() as i64;
    while k as f64 <= hi {
        let x = x_of(1 << k);
        let _ = writeln!(svg, "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">2^{k}</text>", H - BOTTOM + 18.0);
        k += 1;
    }
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">n (keys)</text>",
        (LEFT + W - RIGHT) / 2.0,
        H - 30.0
    );
    for (i, points) in series.values().enumerate() {
        let path: Vec<String> = points.iter().map(|p| format!("{:.1},{:.1}", x_of(p.0), y_of(p.1))).collect();
        let c = COLORS[i % 8];
        let _ =
            writeln!(svg, "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>", path.join(" "));
        for p in points {
            let _ = writeln!(svg, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>", x_of(p.0), y_of(p.1));
        }
    }
    legend(&mut svg, &series.keys().cloned().collect::<Vec<_>>());
    svg + "</svg>\n"
}

/// Grouped bars of `label`: a group per category, a bar per series.
fn bar_chart(
    title: &str,
    label: &str,
    categories: &[String],
    series: &BTreeMap<String, BTreeMap<String, f64>>,
) -> String {
    let mut svg = header(title);
    let max = series.values().flat_map(|m| m.values()).cloned().fold(0.0, f64::max);
    let top = y_axis(&mut svg, max, label);
    let group = (W - LEFT - RIGHT) / categories.len().max(1) as f64;
    let bar = group * 0.8 / series.len().max(1) as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let x0 = LEFT + group * ci as f64 + group * 0.1;
        for (si, values) in series.values().enumerate() {
            if let Some(v) = values.get(cat) {
                let h = (H - TOP - BOTTOM) * v / top;
                let _ = writeln!(
                    svg,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"/>",
                    x0 + bar * si as f64,
                    H - BOTTOM - h,
                    bar,
                    COLORS[si % 8]
                );
            }
        }
        let x = x0 + group * 0.4;
        let _ = writeln!(
            svg,
            "<text transform=\"translate({x:.1},{}) rotate(20)\" text-anchor=\"start\" font-size=\"10\">{}</text>",
            H - BOTTOM + 12.0,
            escape(cat)
        );
    }
    legend(&mut svg, &series.keys().cloned().collect::<Vec<_>>());
    svg + "</svg>\n"
}

/// The charts for a set of rows, one per suite (in the order suites first
/// appear): file name and SVG text.
pub fn charts(rows: &[Row]) -> Vec<(String, String)> {
    let gpu = rows.first().map(|r| r.gpu.clone()).unwrap_or_default();
    let mut suites: Vec<&str> = Vec::new();
    for r in rows {
        if !suites.contains(&r.suite.as_str()) {
            suites.push(&r.suite);
        }
    }
    let mut out = Vec::new();
    for suite in suites {
        let rs: Vec<&Row> = rows.iter().filter(|r| r.suite == suite).collect();
        let sizes: std::collections::BTreeSet<u64> = rs.iter().map(|r| r.n).collect();
        let one_dist = rs.iter().all(|r| r.dist == rs[0].dist);
        // The sorting rate, or for the time per step (Fig. 14) and the
        // start-up the time itself.
        let time = charts_time(suite);
        let (label, y): (&str, fn(&Row) -> f64) =
            if time { ("time (ms)", |r| r.ms) } else { ("sorting rate (Gkeys/s)", |r| r.keys_per_s / 1e9) };
        if sizes.len() > 1 && one_dist {
            // Against n (Figs. 8, 9, 11-14).
            let mut series: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
            for r in &rs {
                series.entry(format!("{} ({})", r.algo, kind(r))).or_default().push((r.n, y(r)));
            }
            let what = if time { "Time per step (ms)" } else { "Sorting rate (Gkeys/s)" };
            let title = format!("{suite}: {what} against n, {} {}, {gpu}", rs[0].dtype, rs[0].dist);
            out.push((format!("{suite}.svg"), line_chart(&title, label, &series)));
        } else {
            // Categories: distributions when they vary, else the algorithms.
            let by_dist = rs.iter().any(|r| r.dist != rs[0].dist);
            let mut categories: Vec<String> = Vec::new();
            let mut series: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
            for r in &rs {
                let (cat, name) = if by_dist {
                    (r.dist.clone(), format!("{} ({})", r.algo, kind(r)))
                } else {
                    (r.algo.clone(), kind(r).to_string())
                };
                if !categories.contains(&cat) {
                    categories.push(cat.clone());
                }
                series.entry(name).or_default().insert(cat, y(r));
            }
            let n = rs.iter().map(|r| r.n).find(|&n| n > 0).unwrap_or(1);
            let title = format!("{suite}: n = 2^{}, {gpu}", (n as f64).log2().round());
            out.push((format!("{suite}.svg"), bar_chart(&title, label, &categories, &series)));
        }
    }
    out
}

/// The rows as CSV.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from("suite,algo,dtype,pairs,dist,n,ms,keys_per_s,verified,gpu\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},\"{}\",{},{},{},{},{},{},{},\"{}\"",
            r.suite, r.algo, r.dtype, r.pairs, r.dist, r.n, r.ms, r.keys_per_s, r.verified, r.gpu
        );
    }
    s
}

/// `cargo xtask plot`.
pub fn plot(input: &Path, out_dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let rows = parse(&text)?;
    std::fs::create_dir_all(out_dir).map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join("results.csv"), csv(&rows)).map_err(|e| e.to_string())?;
    let charts = charts(&rows);
    for (name, svg) in &charts {
        std::fs::write(out_dir.join(name), svg).map_err(|e| e.to_string())?;
    }
    println!("{}: results.csv and {} charts", out_dir.display(), charts.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: &str = r#"{"suite":"sizes","algo":"warpsort","dtype":"u32","pairs":false,"dist":"uniform","n":1048576,"ms":0.1,"keys_per_s":1.0e10,"gb_per_s":80.0,"verified":true,"gpu":"G"}
{"suite":"sizes","algo":"warpsort","dtype":"u32","pairs":false,"dist":"uniform","n":4194304,"ms":0.4,"keys_per_s":1.1e10,"gb_per_s":88.0,"verified":true,"gpu":"G"}
{"suite":"dists","algo":"cub_merge_sort","dtype":"u32","pairs":false,"dist":"sorted","n":16777216,"ms":0.7,"keys_per_s":2.5e10,"gb_per_s":200.0,"verified":true,"gpu":"G"}
{"suite":"dists","algo":"warpsort","dtype":"u32","pairs":false,"dist":"uniform","n":16777216,"ms":1.7,"keys_per_s":9.9e9,"gb_per_s":79.0,"verified":true,"gpu":"G"}"#;

    #[test]
    fn parses_rows_and_writes_csv() {
        let rows = parse(ROWS).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2].algo, "cub_merge_sort");
        assert_eq!(rows[1].n, 4_194_304);
        assert!(rows[3].verified && !rows[0].pairs);
        let csv = csv(&rows);
        assert_eq!(csv.lines().count(), 5);
        assert!(csv.lines().nth(3).unwrap().starts_with("dists,\"cub_merge_sort\",u32,false,sorted,16777216,"));
    }

    #[test]
    fn one_chart_per_suite_with_every_series() {
        let charts = charts(&parse(ROWS).unwrap());
        let names: Vec<&str> = charts.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["sizes.svg", "dists.svg"]);
        let sizes = &charts[0].1;
        assert!(sizes.contains("<polyline") && sizes.contains("warpsort (keys)") && sizes.contains("2^20"));
        let dists = &charts[1].1;
        assert_eq!(dists.matches("<rect x=").count() - 2, 2, "one bar per row, beside two legend swatches");
        assert!(dists.contains(">sorted<") && dists.contains(">uniform<"));
    }

    #[test]
    fn rejects_rows_without_fields() {
        let e = parse("\n{\"suite\":\"x\"}").unwrap_err();
        assert!(e.starts_with("line 2: missing field"), "{e}");
    }

    #[test]
    fn a_suite_met_again_later_is_still_one_chart_of_all_its_rows() {
        let mut text = String::from(ROWS);
        text.push('\n');
        text.push_str(&ROWS.lines().next().unwrap().replace("1048576", "16777216"));
        let charts = charts(&parse(&text).unwrap());
        let names: Vec<&str> = charts.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["sizes.svg", "dists.svg"]);
        assert!(charts[0].1.contains("2^24"), "the late sizes row is in the sizes chart");
    }

    #[test]
    fn the_y_axis_has_at_most_nine_lines_at_any_scale() {
        for max in [0.5, 7.0, 30.0, 1700.0, 48_000.0] {
            let mut svg = String::new();
            let top = y_axis(&mut svg, max, "y");
            assert!(top >= max && svg.matches("<line").count() <= 9, "{max}: {top}, {svg}");
        }
    }

    #[test]
    fn startup_charts_show_milliseconds() {
        let row = |algo: &str, dist: &str, n: u64, ms: f64| {
            format!(
                "{{\"suite\":\"startup\",\"algo\":\"{algo}\",\"dtype\":\"u32\",\"pairs\":false,\"dist\":\"{dist}\",\
                 \"n\":{n},\"ms\":{ms},\"keys_per_s\":0.0,\"gb_per_s\":0.0,\"verified\":true,\"gpu\":\"G\"}}"
            )
        };
        let text = [row("gpu-new", "cache-off", 0, 30000.0), row("first-sort", "cache-on", 1 << 20, 420.0)].join("\n");
        let charts = charts(&parse(&text).unwrap());
        assert_eq!(charts.len(), 1);
        let svg = &charts[0].1;
        assert!(svg.contains("time (ms)") && svg.contains("n = 2^20") && svg.contains(">cache-on<"), "{svg}");
    }
}
