//! A line chart drawn as SVG on the server: the daily faucet/sink ratio against the genre's
//! healthy band, shaded. Plain SVG elements with presentation attributes (no `style`), so the
//! page's Content-Security-Policy holds; a day without money movement leaves a gap in the line.

use maud::{Markup, html};

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;

/// One point of the line: its label and value (`None`: no value that day).
pub struct Point {
    /// Shown under the axis at the ends.
    pub label: String,
    /// The value.
    pub value: Option<f64>,
}

/// The chart of `points` with the band `band_min..band_max` shaded; `title` names it for
/// screen readers.
pub fn line(title: &str, points: &[Point], band_min: f64, band_max: f64) -> Markup {
    let top = points
        .iter()
        .filter_map(|p| p.value)
        .fold(band_max * 1.25, f64::max)
        .max(0.1);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y = |v: f64| TOP + plot_h * (1.0 - (v / top).clamp(0.0, 1.0));
    let step = if points.len() > 1 {
        plot_w / (points.len() - 1) as f64
    } else {
        0.0
    };
    let x = |i: usize| LEFT + step * i as f64;
    // One path segment per run of days with a value.
    let mut d = String::new();
    let mut pen_down = false;
    for (i, p) in points.iter().enumerate() {
        match p.value {
            Some(v) => {
                d.push_str(&format!(
                    "{}{:.1},{:.1} ",
                    if pen_down { "L" } else { "M" },
                    x(i),
                    y(v)
                ));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    let ticks = [0.0, top / 2.0, top];
    html! {
        svg #fsr-chart role="img" aria-labelledby="fsr-chart-title" viewBox={ "0 0 " (WIDTH) " " (HEIGHT) }
            width="100%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg" {
            title #fsr-chart-title { (title) }
            rect.band x=(LEFT) y=(format!("{:.1}", y(band_max))) width=(plot_w)
                height=(format!("{:.1}", y(band_min) - y(band_max))) fill="#34a853" fill-opacity="0.18" {}
            @for t in ticks {
                line x1=(LEFT) x2=(WIDTH - RIGHT) y1=(format!("{:.1}", y(t))) y2=(format!("{:.1}", y(t))) stroke="#d9dee5" {}
                text x=(LEFT - 6.0) y=(format!("{:.1}", y(t) + 4.0)) text-anchor="end" font-size="11" fill="#5f6b7a" { (format!("{t:.1}")) }
            }
            path.line d=(d.trim_end()) fill="none" stroke="#0b57d0" stroke-width="2" {}
            @for (i, p) in points.iter().enumerate() {
                @if let Some(v) = p.value {
                    circle cx=(format!("{:.1}", x(i))) cy=(format!("{:.1}", y(v))) r="3" fill="#0b57d0" {
                        title { (p.label) ": " (format!("{v:.2}")) }
                    }
                }
            }
            @if let (Some(first), Some(last)) = (points.first(), points.last()) {
                text x=(LEFT) y=(HEIGHT - 8.0) font-size="11" fill="#5f6b7a" { (first.label) }
                text x=(WIDTH - RIGHT) y=(HEIGHT - 8.0) text-anchor="end" font-size="11" fill="#5f6b7a" { (last.label) }
            }
        }
    }
}
