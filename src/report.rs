//! Reports of measured results: SVG charts (written by hand, a few dozen
//! lines each) and JSON records (serde).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

const W: f64 = 860.0;
const H: f64 = 460.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 110.0;
const COLORS: [&str; 10] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A round step for axis ticks covering `0..=max`.
fn tick_step(max: f64) -> f64 {
    let raw = max / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(mag * 10.0)
}

/// The frame, title and y axis (TFLOP/s) of a chart whose values reach `max`;
/// returns the SVG so far and the y of a value.
fn frame(title: &str, max: f64) -> (String, impl Fn(f64) -> f64) {
    let step = tick_step(max.max(1e-9));
    let top = (max / step).ceil().max(1.0) * step;
    let plot_h = H - TOP - BOTTOM;
    let y = move |v: f64| TOP + plot_h * (1.0 - v / top);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">
<rect width="{W}" height="{H}" fill="white"/>
<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>
"#,
        W / 2.0,
        escape(title)
    );
    let mut v = 0.0;
    while v <= top + 1e-9 {
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{v}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y(v) + 4.0,
            y = y(v)
        );
        v += step;
    }
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">TFLOP/s</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    (s, y)
}

/// One bar per labelled value, and a dashed reference line (cuBLAS).
pub fn bar_chart(title: &str, bars: &[(String, f64)], reference: (&str, f64)) -> String {
    let max = bars.iter().map(|b| b.1).fold(reference.1, f64::max);
    let (mut s, y) = frame(title, max);
    let slot = (W - LEFT - RIGHT) / bars.len().max(1) as f64;
    for (i, (label, v)) in bars.iter().enumerate() {
        let x = LEFT + slot * i as f64 + slot * 0.15;
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{v:.1}</text>"#,
            y(*v),
            slot * 0.7,
            y(0.0) - y(*v),
            COLORS[0],
            x + slot * 0.35,
            y(*v) - 4.0
        );
        let (lx, ly) = (x + slot * 0.35, y(0.0) + 12.0);
        let _ = writeln!(s, r#"<text x="{lx:.1}" y="{ly:.1}" transform="rotate(35 {lx:.1} {ly:.1})">{}</text>"#, escape(label));
    }
    let ry = y(reference.1);
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" x2="{}" y1="{ry:.1}" y2="{ry:.1}" stroke="#000" stroke-dasharray="6 4"/><text x="{}" y="{:.1}">{} {:.1}</text>"##,
        W - RIGHT,
        W - RIGHT + 6.0,
        ry + 4.0,
        escape(reference.0),
        reference.1
    );
    s + "</svg>\n"
}

/// One line per series over the x labels (None: not measured), and the
/// reference series (cuBLAS) dashed.
pub fn line_chart(title: &str, x: &[String], series: &[(String, Vec<Option<f64>>)], reference: (&str, &[f64])) -> String {
    let max = series.iter().flat_map(|s| s.1.iter().flatten()).copied().chain(reference.1.iter().copied()).fold(0.0, f64::max);
    let (mut s, y) = frame(title, max);
    let slot = (W - LEFT - RIGHT) / x.len().max(1) as f64;
    let px = |i: usize| LEFT + slot * (i as f64 + 0.5);
    for (i, label) in x.iter().enumerate() {
        // Slanted, so that long shape labels do not run into each other.
        let (lx, ly) = (px(i) - 10.0, y(0.0) + 14.0);
        let _ = writeln!(s, r#"<text x="{lx:.1}" y="{ly:.1}" transform="rotate(25 {lx:.1} {ly:.1})">{}</text>"#, escape(label));
    }
    let mut line = |name: &str, values: Vec<Option<f64>>, color: &str, dash: &str, row: usize| {
        let points: Vec<String> = values.iter().enumerate().filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", px(i), y(v)))).collect();
        let _ = writeln!(s, r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>"#, points.join(" "));
        for p in &points {
            let (cx, cy) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = writeln!(s, r#"<circle cx="{cx}" cy="{cy}" r="3" fill="{color}"/>"#);
        }
        let ly = TOP + 16.0 * row as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{:.1}">{}</text>"#,
            W - RIGHT + 10.0,
            W - RIGHT + 30.0,
            W - RIGHT + 36.0,
            ly + 4.0,
            escape(name)
        );
    };
    line(reference.0, reference.1.iter().map(|v| Some(*v)).collect(), "#000", "6 4", 0);
    for (i, (name, values)) in series.iter().enumerate() {
        line(name, values.clone(), COLORS[i % COLORS.len()], "", i + 1);
    }
    s + "</svg>\n"
}

/// The bench's record (`target/bench/{ladder,tensor}.json`).
#[derive(Debug, Serialize)]
pub struct BenchRecord {
    pub device: String,
    pub driver: String,
    pub date: String,
    pub runs: usize,
    pub sizes: Vec<SizeRecord>,
}

/// One size of the bench: cuBLAS in each configuration, then every step.
#[derive(Debug, Serialize)]
pub struct SizeRecord {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// TFLOP/s by configuration (`bf16bf16bf16_rrr`).
    pub cublas_tflops: BTreeMap<String, f64>,
    pub steps: Vec<StepRecord>,
}

/// One step measured: against cuBLAS in `cublas`, its own configuration.
#[derive(Debug, Serialize)]
pub struct StepRecord {
    pub step: String,
    pub tflops: f64,
    pub cublas: String,
    pub pct_of_cublas: f64,
    pub rel_err: f64,
}

/// The ladder's record (`target/{ladder,tensor}.json`): one size, every step.
#[derive(Debug, Serialize)]
pub struct LadderRecord {
    pub device: String,
    pub driver: String,
    pub runs: usize,
    pub size: SizeRecord,
}

/// The search's record (`target/search.json`): every verified candidate.
#[derive(Debug, Serialize)]
pub struct SearchRecord {
    pub device: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub candidates: Vec<CandidateRecord>,
}

#[derive(Debug, Serialize)]
pub struct CandidateRecord {
    pub tflops: f64,
    pub kernel: String,
    /// The `#[gemm_kernel(..)]` attribute that describes it.
    pub attribute: String,
}

/// `x` to `digits` decimals, so records do not carry timing noise's last bits.
pub fn rounded(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// Writes `record` as pretty JSON to `target/<name>`; returns the path.
pub fn write_json(name: &str, record: &impl Serialize) -> std::io::Result<std::path::PathBuf> {
    write_target(name, &(serde_json::to_string_pretty(record)? + "\n"))
}

/// A progress bar of `len` steps on stderr: one line that updates, `{msg}`
/// naming the current step; drawn only where stderr is a terminal.
pub fn progress(len: usize) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len as u64);
    let style = indicatif::ProgressStyle::with_template("[{elapsed_precise}] {bar:30} {pos:>4}/{len} {msg}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// Writes `text` to `target/<name>`, creating the folder; returns the path.
pub fn write_target(name: &str, text: &str) -> std::io::Result<std::path::PathBuf> {
    let path = std::path::Path::new("target").join(name);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&path, text)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_well_formed_svg_with_every_label() {
        let bars = vec![("naive".to_string(), 0.5), ("tiled <32>".to_string(), 9.2)];
        let svg = bar_chart("ladder", &bars, ("cuBLAS", 51.7));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains(">naive<") && svg.contains("tiled &lt;32&gt;") && svg.contains("cuBLAS 51.7"));
        let x = vec!["1024".to_string(), "2048".to_string()];
        let series = vec![("warptiling".to_string(), vec![Some(30.0), None])];
        let svg = line_chart("bench", &x, &series, ("cuBLAS", &[40.0, 50.0]));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">warptiling<"));
    }

    #[test]
    fn records_serialize_with_their_field_names() {
        let step =
            StepRecord { step: "naive \"1\"".into(), tflops: rounded(1.23456, 3), cublas: "f32f32f32_rrr".into(), pct_of_cublas: 2.5, rel_err: 1e-7 };
        let json = serde_json::to_string(&step).unwrap();
        assert_eq!(json, r#"{"step":"naive \"1\"","tflops":1.235,"cublas":"f32f32f32_rrr","pct_of_cublas":2.5,"rel_err":1e-7}"#);
    }

    #[test]
    fn write_target_creates_nested_folders() {
        let name = format!("report-test-{}/nested/x.txt", std::process::id());
        let path = write_target(&name, "x").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x");
        std::fs::remove_dir_all(std::path::Path::new("target").join(name.split('/').next().unwrap())).unwrap();
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(tick_step(51.7), 10.0);
        assert_eq!(tick_step(0.9), 0.2);
    }
}
