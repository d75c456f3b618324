//! The limits one render runs under ([`Budget`]) and the meter that holds a render to them
//! ([`Meter`]).
//!
//! A template is untrusted input: a huge font, methods calling each other many ways, or
//! text doubled by locals must fail its preview, never take the engine's memory or cores.
//! Every loop of evaluation, layout and painting charges the meter before it does the work,
//! and every large allocation (the canvas, masks, decoded art, text, widget values) is
//! charged with its size, computed with checked arithmetic, before it is made. The first
//! limit crossed stops the render with [`RenderError::OverBudget`] naming it.

use std::cell::Cell;
use std::time::{Duration, Instant};

use offer_domain::template::limits;

use crate::error::{Exceeded, RenderError};

/// How many charges pass between two looks at the clock.
const CLOCK_EVERY: u64 = 256;

/// The stack a render's thread needs. Evaluation, layout and painting recurse as deep as
/// the page nests, which the budget bounds (expressions at most twice `max_depth` deep,
/// boxes `max_depth`): at the default budget that fits in 8 MiB even in a debug build,
/// whose frames are several times larger than a release build's.
pub const RENDER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// The limits of one render (one screen size of a preview).
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// Most pixels of the canvas (width times height). Default 4,000,000: both phone sizes
    /// (at most 2,962,440 pixels) fit.
    pub max_canvas_pixels: u64,
    /// Largest font size, in logical pixels. Default
    /// [`MAX_FONT_SIZE`](limits::MAX_FONT_SIZE), 512.
    pub max_font_size: f32,
    /// Most glyphs laid out, each measured and drawn at most once. Default
    /// [`MAX_GLYPHS`](limits::MAX_GLYPHS), 20,000.
    pub max_glyphs: u64,
    /// Most boxes laid out. Default [`MAX_LAYOUT_NODES`](limits::MAX_LAYOUT_NODES), 20,000.
    pub max_layout_nodes: u64,
    /// Deepest widget nesting. Default [`MAX_WIDGET_DEPTH`](limits::MAX_WIDGET_DEPTH), 128.
    pub max_depth: usize,
    /// Most evaluation steps: expressions evaluated, calls made, value nodes copied. Default
    /// [`MAX_EVAL_STEPS`](limits::MAX_EVAL_STEPS), 200,000.
    pub max_eval_steps: u64,
    /// Longest a render may run; checked between steps, so a render past it stops within
    /// a few hundred steps. Default 2 seconds (an ordinary page takes a few tens of
    /// milliseconds).
    pub time: Duration,
    /// Most bytes the render allocates, counted over the whole render at each large
    /// allocation (never released, so it bounds the peak). Default 256 MiB: the largest
    /// canvas and its PNG encoding take about 40 MiB, and one 4096 x 4096 item art 128 MiB
    /// while it is decoded.
    pub max_memory_bytes: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_canvas_pixels: 4_000_000,
            max_font_size: limits::MAX_FONT_SIZE,
            max_glyphs: limits::MAX_GLYPHS,
            max_layout_nodes: limits::MAX_LAYOUT_NODES,
            max_depth: limits::MAX_WIDGET_DEPTH,
            max_eval_steps: limits::MAX_EVAL_STEPS,
            time: Duration::from_secs(2),
            max_memory_bytes: 256 * 1024 * 1024,
        }
    }
}

/// One render's consumption of its [`Budget`]. Charges go through `&self` (the evaluator
/// and the layout share it read-only), so the counters are cells: a meter belongs to one
/// render on one thread.
#[derive(Debug)]
pub struct Meter {
    budget: Budget,
    deadline: Option<Instant>,
    steps: Cell<u64>,
    glyphs: Cell<u64>,
    nodes: Cell<u64>,
    bytes: Cell<u64>,
    ticks: Cell<u64>,
    nesting: Cell<usize>,
}

impl Meter {
    /// A meter for a render starting now.
    pub fn new(budget: &Budget) -> Self {
        Self {
            budget: budget.clone(),
            deadline: Instant::now().checked_add(budget.time),
            steps: Cell::new(0),
            glyphs: Cell::new(0),
            nodes: Cell::new(0),
            bytes: Cell::new(0),
            ticks: Cell::new(0),
            nesting: Cell::new(0),
        }
    }

    /// Adds `n` to `counter`, refusing past `max` with `over`; looks at the clock every
    /// [`CLOCK_EVERY`] charges.
    fn add(
        &self,
        counter: &Cell<u64>,
        n: u64,
        max: u64,
        over: impl FnOnce() -> Exceeded,
    ) -> Result<(), RenderError> {
        let total = counter.get().saturating_add(n);
        if total > max {
            return Err(RenderError::OverBudget(over()));
        }
        counter.set(total);
        self.tick()
    }

    /// Counts one unit of work that has no limit of its own (a box or glyph painted), so
    /// the clock is looked at during painting too.
    pub fn tick(&self) -> Result<(), RenderError> {
        let ticks = self.ticks.get().wrapping_add(1);
        self.ticks.set(ticks);
        if ticks.is_multiple_of(CLOCK_EVERY) {
            self.check_time()?;
        }
        Ok(())
    }

    /// Charges `n` evaluation steps.
    pub fn steps(&self, n: u64) -> Result<(), RenderError> {
        let max = self.budget.max_eval_steps;
        self.add(&self.steps, n, max, || Exceeded::EvalSteps { max })
    }

    /// Charges `n` glyphs.
    pub fn glyphs(&self, n: u64) -> Result<(), RenderError> {
        let max = self.budget.max_glyphs;
        self.add(&self.glyphs, n, max, || Exceeded::Glyphs { max })
    }

    /// Charges one laid-out box.
    pub fn node(&self) -> Result<(), RenderError> {
        let max = self.budget.max_layout_nodes;
        self.add(&self.nodes, 1, max, || Exceeded::LayoutNodes { max })
    }

    /// Charges `n` bytes about to be allocated for `what`; `None` (a size that overflowed
    /// while it was computed) is over any budget.
    pub fn alloc(&self, n: Option<u64>, what: &'static str) -> Result<(), RenderError> {
        let max = self.budget.max_memory_bytes;
        let n = n.unwrap_or(u64::MAX);
        self.add(&self.bytes, n, max, || Exceeded::Memory { what, max })
    }

    /// Charges `count` values of type `T`.
    pub fn alloc_of<T>(&self, count: usize, what: &'static str) -> Result<(), RenderError> {
        let size = u64::try_from(std::mem::size_of::<T>()).ok();
        let count = u64::try_from(count).ok();
        self.alloc(size.zip(count).and_then(|(s, c)| s.checked_mul(c)), what)
    }

    /// Refuses a nesting depth past `max_depth`.
    pub fn depth(&self, depth: usize) -> Result<(), RenderError> {
        let max = self.budget.max_depth;
        if depth > max {
            return Err(RenderError::OverBudget(Exceeded::Depth { max }));
        }
        Ok(())
    }

    /// Enters one more nested expression, refused past twice `max_depth` (a widget passed
    /// as an argument nests its expression one level deeper than its parent's): the
    /// evaluator's recursion stays within [`RENDER_STACK_BYTES`]. A render that fails is
    /// dropped whole, so only a successful evaluation needs to [`leave`](Self::leave).
    pub fn enter(&self) -> Result<(), RenderError> {
        let max = self.budget.max_depth;
        let nesting = self.nesting.get() + 1;
        if nesting > max.saturating_mul(2) {
            return Err(RenderError::OverBudget(Exceeded::Depth { max }));
        }
        self.nesting.set(nesting);
        Ok(())
    }

    /// Leaves a nested expression.
    pub fn leave(&self) {
        self.nesting.set(self.nesting.get().saturating_sub(1));
    }

    /// Refuses a font size over `max_font_size`.
    pub fn font_size(&self, size: f32) -> Result<(), RenderError> {
        let max = self.budget.max_font_size;
        // Written so that NaN passes: the layout reads it as the smallest size.
        if size > max {
            return Err(RenderError::OverBudget(Exceeded::FontSize { size, max }));
        }
        Ok(())
    }

    /// Refuses a canvas of more than `max_canvas_pixels`, then charges its bytes at
    /// `bytes_per_pixel`.
    pub fn canvas(
        &self,
        width: u32,
        height: u32,
        bytes_per_pixel: u64,
        what: &'static str,
    ) -> Result<(), RenderError> {
        let pixels = u64::from(width) * u64::from(height);
        let max = self.budget.max_canvas_pixels;
        if pixels > max {
            return Err(RenderError::OverBudget(Exceeded::CanvasArea {
                pixels,
                max,
            }));
        }
        self.alloc(pixels.checked_mul(bytes_per_pixel), what)
    }

    /// Stops a render past its deadline.
    pub fn check_time(&self) -> Result<(), RenderError> {
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => {
                Err(RenderError::OverBudget(Exceeded::Time {
                    max: self.budget.time,
                }))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_refuses_the_charge_that_crosses_it_and_names_itself() {
        let budget = Budget {
            max_eval_steps: 10,
            max_memory_bytes: 100,
            max_canvas_pixels: 50,
            ..Budget::default()
        };
        let meter = Meter::new(&budget);
        assert!(meter.steps(10).is_ok());
        let err = meter.steps(1).expect_err("over the steps");
        assert!(err.to_string().contains("evaluation step limit"), "{err}");
        assert!(meter.alloc(Some(60), "text").is_ok());
        let err = meter.alloc(Some(41), "text").expect_err("over the bytes");
        assert!(err.to_string().contains("memory limit: text"), "{err}");
        assert!(meter.alloc(None, "a size that overflowed").is_err());
        assert!(
            meter.alloc(Some(40), "text").is_ok(),
            "a refused charge is not counted"
        );
        let err = meter.canvas(10, 6, 4, "the canvas").expect_err("60 pixels");
        assert!(err.to_string().contains("canvas area limit"), "{err}");
        assert!(meter.font_size(f32::NAN).is_ok());
        assert!(meter.font_size(budget.max_font_size + 1.0).is_err());
        assert!(meter.depth(budget.max_depth).is_ok());
        assert!(meter.depth(budget.max_depth + 1).is_err());
    }

    #[test]
    fn a_render_past_its_time_stops_at_the_next_look_at_the_clock() {
        let meter = Meter::new(&Budget {
            time: Duration::ZERO,
            ..Budget::default()
        });
        let err = meter.check_time().expect_err("no time at all");
        assert!(err.to_string().contains("time limit"), "{err}");
        let stopped = (0..CLOCK_EVERY).find_map(|_| meter.steps(1).err());
        assert!(stopped.is_some(), "the steps never looked at the clock");
    }
}
