//! The running shares of a scenario over time, as CSV and as a hand-written SVG line chart:
//! one engine line per seed, the best single offer and uniform random averaged over the
//! seeds, the scored window shaded, and the shift or the promotion marked.

use std::fmt::Write as _;

use super::scenario::Timeline;
use super::score::Shares;

/// Chart size in pixels, and its margins.
const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 44.0;

/// The running shares of one seed: `(offers played, shares of the window ending there)`.
#[derive(Debug, Clone)]
pub struct Series {
    /// The seed.
    pub seed: u64,
    /// The points, in order.
    pub points: Vec<(usize, Shares)>,
}

/// The CSV of every seed's points: `seed,offers,engine,best_single,uniform`.
pub fn csv(series: &[Series]) -> String {
    let mut out = String::from("seed,offers,engine,best_single,uniform\n");
    for s in series {
        for (offers, shares) in &s.points {
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "{},{offers},{:.4},{:.4},{:.4}",
                s.seed, shares.engine, shares.single, shares.uniform
            );
        }
    }
    out
}

/// The mean over the seeds of `pick` at each point (the seeds share their points' offsets).
fn mean_line(series: &[Series], pick: fn(&Shares) -> f64) -> Vec<(usize, f64)> {
    let Some(first) = series.first() else {
        return Vec::new();
    };
    (0..first.points.len())
        .map(|i| {
            let values: Vec<f64> = series
                .iter()
                .filter_map(|s| s.points.get(i).map(|(_, sh)| pick(sh)))
                .collect();
            (
                first.points[i].0,
                values.iter().sum::<f64>() / values.len().max(1) as f64,
            )
        })
        .collect()
}

/// Maps offers played and a share to chart coordinates.
struct Frame {
    offers: f64,
}

impl Frame {
    fn x(&self, offers: usize) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT) * offers as f64 / self.offers.max(1.0)
    }

    fn y(&self, share: f64) -> f64 {
        TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - share.clamp(0.0, 1.0))
    }

    fn polyline(&self, points: &[(usize, f64)], style: &str) -> String {
        let coords: Vec<String> = points
            .iter()
            .map(|(o, v)| format!("{:.1},{:.1}", self.x(*o), self.y(*v)))
            .collect();
        format!(
            "<polyline fill=\"none\" {style} points=\"{}\"/>\n",
            coords.join(" ")
        )
    }
}

/// The step between the ticks of the offers axis: a round number giving at most 8 steps.
fn tick_step(offers: usize) -> usize {
    let mut magnitude = 1;
    loop {
        for m in [1, 2, 5] {
            let step = m * magnitude;
            if offers <= step * 8 {
                return step;
            }
        }
        magnitude *= 10;
    }
}

/// Escapes text for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart of `series` over `timeline`, titled `title`.
pub fn svg(title: &str, series: &[Series], timeline: &Timeline) -> String {
    let frame = Frame {
        offers: timeline.offers as f64,
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        out,
        "<rect width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"white\"/>\n\
         <text x=\"{LEFT}\" y=\"22\" font-size=\"14\">{}</text>",
        escape(title)
    );
    // The scored window.
    let (from, to) = timeline.scored;
    let _ = writeln!(
        out,
        "<rect x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#eef3e2\"/>",
        frame.x(from),
        frame.x(to) - frame.x(from),
        HEIGHT - TOP - BOTTOM
    );
    // Grid and axes.
    for i in 0..=4 {
        let share = f64::from(i) / 4.0;
        let y = frame.y(share);
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{share:.2}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let step = tick_step(timeline.offers);
    for offers in (0..=timeline.offers).step_by(step) {
        let x = frame.x(offers);
        let _ = writeln!(
            out,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{offers}</text>",
            HEIGHT - BOTTOM + 16.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">offers played (share of the \
         oracle over the last 500)</text>",
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 8.0
    );
    // The shift or the promotion.
    let marker = timeline
        .shift_at
        .map(|t| (t, "shift"))
        .or(timeline.shadow_until.map(|t| (t, "autonomous")));
    if let Some((t, label)) = marker {
        let x = frame.x(t);
        let _ = writeln!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#c33\" \
             stroke-dasharray=\"2 3\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#c33\">{label}</text>",
            HEIGHT - BOTTOM,
            x + 4.0,
            TOP + 12.0
        );
    }
    // The lines.
    for s in series {
        let points: Vec<(usize, f64)> = s.points.iter().map(|(o, sh)| (*o, sh.engine)).collect();
        out.push_str(&frame.polyline(
            &points,
            "stroke=\"#1f5fbf\" stroke-width=\"1.4\" stroke-opacity=\"0.75\"",
        ));
    }
    out.push_str(&frame.polyline(
        &mean_line(series, |s| s.single),
        "stroke=\"#e08a00\" stroke-width=\"1.6\" stroke-dasharray=\"6 4\"",
    ));
    out.push_str(&frame.polyline(
        &mean_line(series, |s| s.uniform),
        "stroke=\"#777\" stroke-width=\"1.4\" stroke-dasharray=\"2 3\"",
    ));
    // The legend.
    let lx = WIDTH - RIGHT + 14.0;
    for (i, (label, colour, dash)) in [
        ("engine (one per seed)", "#1f5fbf", ""),
        ("best single offer", "#e08a00", "6 4"),
        ("uniform random", "#777", "2 3"),
        ("scored window", "#eef3e2", ""),
    ]
    .iter()
    .enumerate()
    {
        let y = TOP + 10.0 + 20.0 * i as f64;
        let width = if i == 3 { 10 } else { 2 };
        let _ = writeln!(
            out,
            "<line x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" \
             stroke-width=\"{width}\" stroke-dasharray=\"{dash}\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\">{label}</text>",
            lx + 22.0,
            lx + 28.0,
            y + 4.0
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::scenario::Scenario;

    fn series(seed: u64, engine: f64) -> Series {
        let shares = Shares {
            engine,
            single: 0.5,
            uniform: 0.25,
        };
        Series {
            seed,
            points: vec![(500, shares), (600, shares)],
        }
    }

    #[test]
    fn the_csv_has_a_row_per_point_and_seed() {
        let text = csv(&[series(1, 0.8), series(2, 0.6)]);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[0], "seed,offers,engine,best_single,uniform");
        assert_eq!(rows[1], "1,500,0.8000,0.5000,0.2500");
        assert_eq!(rows[4], "2,600,0.6000,0.5000,0.2500");
    }

    #[test]
    fn the_svg_draws_each_seed_and_the_benchmarks() {
        let timeline = Timeline::of(Scenario::Shift, 1_000);
        let text = svg("shift <old>", &[series(1, 0.8), series(2, 0.6)], &timeline);
        assert!(text.starts_with("<svg"));
        assert!(text.trim_end().ends_with("</svg>"));
        assert_eq!(text.matches("<polyline").count(), 4);
        assert!(text.contains("shift &lt;old&gt;"));
        assert!(text.contains(">shift</text>"));
    }

    #[test]
    fn ticks_fall_on_round_numbers() {
        assert_eq!(tick_step(16_000), 2_000);
        assert_eq!(tick_step(2_500), 500);
        assert_eq!(tick_step(4_000), 500);
        assert_eq!(tick_step(7), 1);
    }

    #[test]
    fn the_benchmark_lines_average_the_seeds() {
        let line = mean_line(&[series(1, 0.8), series(2, 0.6)], |s| s.engine);
        assert_eq!(line.len(), 2);
        assert!((line[0].1 - 0.7).abs() < 1e-12);
    }
}
