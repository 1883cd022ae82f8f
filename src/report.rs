//! Reports of measured results: SVG charts (plotters) and JSON records
//! (serde).

use std::collections::BTreeMap;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Serialize;

const SIZE: (u32, u32) = (900, 480);
const FONT: &str = "sans-serif";
/// Tableau 10: distinct and readable on white.
const COLORS: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// The top of a TFLOP/s axis that holds `max`, with room for labels above bars.
fn axis_top(max: f64) -> f64 {
    (max * 1.12).max(1e-9)
}

/// One horizontal bar per labelled value, first at the top, its TFLOP/s at
/// its end, and a dashed reference line (cuBLAS) with its name and value.
pub fn bar_chart(title: &str, bars: &[(String, f64)], reference: (&str, f64)) -> String {
    let mut svg = String::new();
    draw_bars(&mut svg, title, bars, reference).expect("drawing into a string cannot fail");
    svg
}

fn draw_bars(svg: &mut String, title: &str, bars: &[(String, f64)], reference: (&str, f64)) -> Result<(), Box<dyn std::error::Error>> {
    let n = bars.len().max(1);
    // names read across, so the height follows the number of bars
    let size = (SIZE.0, 110 + 26 * n as u32);
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let right = axis_top(bars.iter().map(|b| b.1).fold(reference.1, f64::max)) * 1.05;
    let longest = bars.iter().map(|b| b.0.len()).max().unwrap_or(4) as u32;
    // one unit of y per bar, the first at the top
    let rows = -0.5..n as f64 - 0.5;
    let row = |i: usize| (n - 1 - i) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(20 + 8 * longest)
        .build_cartesian_2d(0.0..right, rows.clone())?;
    chart.configure_mesh().disable_y_mesh().y_labels(0).x_desc("TFLOP/s").x_label_style((FONT, 13)).x_label_formatter(&tick).draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| Rectangle::new([(0.0, row(i) - 0.36), (*v, row(i) + 0.36)], COLORS[0].filled())))?;
    let value = TextStyle::from((FONT, 12)).pos(Pos::new(HPos::Left, VPos::Center));
    let gap = right / 200.0;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| Text::new(format!("{v:.1}"), (v + gap, row(i)), value.clone())))?;
    // the names left of the axis, each beside its bar
    let name = TextStyle::from((FONT, 13)).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, (label, _)) in bars.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(0.0, row(i)));
        root.draw(&Text::new(label.clone(), (x - 8, y), name.clone()))?;
    }
    // the reference: a dashed line down the plot, its name and value at its top
    let line = [(reference.1, rows.start), (reference.1, rows.end)];
    chart.draw_series(DashedLineSeries::new(line, 8, 5, BLACK.stroke_width(2)))?;
    let label = TextStyle::from((FONT, 13)).pos(Pos::new(HPos::Right, VPos::Top));
    chart.draw_series([Text::new(format!("{} {:.1} ", reference.0, reference.1), (reference.1, rows.end), label)])?;
    root.present()?;
    Ok(())
}

/// An axis value: whole numbers without decimals, others with one.
fn tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// One line per series over the x labels (None: not measured), and the
/// reference series (cuBLAS) dashed; a legend beside the plot.
pub fn line_chart(title: &str, x: &[String], series: &[(String, Vec<Option<f64>>)], reference: (&str, &[f64])) -> String {
    let mut svg = String::new();
    draw_lines(&mut svg, title, x, series, reference).expect("drawing into a string cannot fail");
    svg
}

fn draw_lines(
    svg: &mut String,
    title: &str,
    x: &[String],
    series: &[(String, Vec<Option<f64>>)],
    reference: (&str, &[f64]),
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    // the legend in a column of its own, right of the plot
    let (plot, legend) = root.split_horizontally(SIZE.0 - 230);
    let max = series.iter().flat_map(|s| s.1.iter().flatten()).copied().chain(reference.1.iter().copied()).fold(0.0, f64::max);
    // one unit of x per size
    let n = x.len().max(1);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, (FONT, 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..axis_top(max))?;
    chart.configure_mesh().disable_x_mesh().x_labels(0).y_desc("TFLOP/s").y_label_style((FONT, 13)).y_label_formatter(&tick).draw()?;
    // the sizes under the axis, each under its points
    let size_label = TextStyle::from((FONT, 12)).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, label) in x.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64, 0.0));
        root.draw(&Text::new(label.clone(), (px, py + 8), size_label.clone()))?;
    }
    let at = |i: usize, v: f64| (i as f64, v);
    let mut entries: Vec<(String, RGBColor, bool)> = vec![(reference.0.to_string(), BLACK, true)];
    chart.draw_series(DashedLineSeries::new(reference.1.iter().enumerate().map(|(i, v)| at(i, *v)), 8, 5, BLACK.stroke_width(2)))?;
    chart.draw_series(reference.1.iter().enumerate().map(|(i, v)| Circle::new(at(i, *v), 3, BLACK.filled())))?;
    for (k, (name, values)) in series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        // a gap where a size was not measured
        for run in values.iter().enumerate().collect::<Vec<_>>().split(|(_, v)| v.is_none()) {
            let points: Vec<_> = run.iter().filter_map(|(i, v)| v.map(|v| at(*i, v))).collect();
            chart.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?;
            chart.draw_series(points.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
        }
        entries.push((name.clone(), color, false));
    }
    for (row, (name, color, dashed)) in entries.iter().enumerate() {
        let y = 50 + 20 * row as i32;
        let style = color.stroke_width(2);
        if *dashed {
            legend.draw(&PathElement::new(vec![(4, y), (12, y)], style))?;
            legend.draw(&PathElement::new(vec![(18, y), (26, y)], style))?;
        } else {
            legend.draw(&PathElement::new(vec![(4, y), (26, y)], style))?;
        }
        legend.draw(&Text::new(name.clone(), (32, y), TextStyle::from((FONT, 13)).pos(Pos::new(HPos::Left, VPos::Center))))?;
    }
    root.present()?;
    Ok(())
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
/// naming the current step; quiet unless stdout and stderr are terminals
/// (a run whose table goes to a file or a pipe leaves no bar in its logs).
pub fn progress(len: usize) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    let bar = if std::io::stdout().is_terminal() { indicatif::ProgressBar::new(len as u64) } else { indicatif::ProgressBar::hidden() };
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
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for text in ["naive", "tiled &lt;32&gt;", "cuBLAS 51.7", "9.2", "TFLOP/s"] {
            assert!(svg.contains(text), "{text} missing");
        }
        let x = vec!["1024^3".to_string(), "2048^3".to_string()];
        let series = vec![("warptiling".to_string(), vec![Some(30.0), None])];
        let svg = line_chart("bench", &x, &series, ("cuBLAS", &[40.0, 50.0]));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for text in ["warptiling", "cuBLAS", "1024^3", "2048^3"] {
            assert!(svg.contains(text), "{text} missing");
        }
        // a measured point is drawn, an unmeasured one is not
        assert_eq!(svg.matches("<circle").count(), 2 + 1);
    }

    #[test]
    fn a_single_step_or_size_is_drawn_with_its_label() {
        // every step's own example charts one bar
        let svg = bar_chart("one step", &[("smem_tiling".to_string(), 8.7)], ("cuBLAS", 51.7));
        assert_eq!(svg.matches(r##"fill="#4E79A7""##).count(), 1, "the bar is drawn");
        assert!(svg.contains("smem_tiling") && svg.contains("8.7"));
        let svg = line_chart("one size", &["1024^3".to_string()], &[("naive".to_string(), vec![Some(0.5)])], ("cuBLAS", &[35.0]));
        assert_eq!(svg.matches("<circle").count(), 2);
        assert!(svg.contains("1024^3"));
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
}
