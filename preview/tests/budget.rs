//! Pages over the render budget fail with the limit they crossed, and memory stays bounded
//! while they do: this test binary runs under a 512 MiB cap on everything it allocates
//! (`cap`), so a render that tried to allocate past it (a glyph buffer of gigabytes) would
//! abort the binary and fail every test here. Two renders at the default budget (256 MiB
//! each, counted generously) fit under the cap.

use std::time::Duration;

use cap::Cap;
use offer_domain::template::parse;
use offer_preview::testing::{
    FIXTURE_PAGE, fan_out_page, font_size_page, gems, spring_sale_bindings,
};
use offer_preview::{
    Budget, Exceeded, PHONE_1080X1920, PHONE_1170X2532, PHONE_SIZES, RENDER_STACK_BYTES,
    RenderError, Screen, render,
};

#[global_allocator]
static ALLOCATOR: Cap<std::alloc::System> = Cap::new(std::alloc::System, 512 * 1024 * 1024);

/// A 64x64 PNG for the bound item's art.
fn art() -> Vec<u8> {
    let mut p = tiny_skia::Pixmap::new(64, 64).expect("pixmap");
    p.fill(tiny_skia::Color::from_rgba8(120, 40, 200, 255));
    p.encode_png().expect("png")
}

fn render_with(src: &str, screen: Screen, budget: &Budget) -> Result<Vec<u8>, RenderError> {
    let tree = parse(src).expect("the page parses");
    render(
        &tree,
        &spring_sale_bindings(),
        &[gems(art())],
        screen,
        budget,
    )
}

/// The limit a render crossed; panics when it rendered or failed otherwise.
fn exceeded(src: &str, screen: Screen, budget: &Budget) -> Exceeded {
    match render_with(src, screen, budget) {
        Err(RenderError::OverBudget(e)) => e,
        other => panic!("expected a budget refusal, got {other:?}"),
    }
}

/// A page with one local: `Column(children: [...])` of `body`.
fn page(locals: &str, body: &str) -> String {
    format!(
        "class P extends StatelessWidget {{\n  final OfferData offer;\n  \
         Widget build(BuildContext context) {{\n{locals}    return {body};\n  }}\n}}\n"
    )
}

#[test]
fn huge_font_sizes_are_refused_naming_the_font_size_limit() {
    for size in [5_000, 20_000, 100_000] {
        for screen in PHONE_SIZES {
            let e = exceeded(&font_size_page(size), screen, &Budget::default());
            assert!(
                matches!(e, Exceeded::FontSize { max, .. } if max == 512.0),
                "{size}: {e:?}"
            );
            let message = RenderError::OverBudget(e).to_string();
            assert!(
                message.contains("font size limit") && message.contains(&size.to_string()),
                "{message}"
            );
        }
    }
}

/// The largest font allowed, a line of 53 of them: every glyph covers much of the screen,
/// each filled straight onto the canvas, so the render fits in a small memory budget.
#[test]
fn text_at_the_largest_font_size_renders_within_a_small_memory_budget() {
    let src = font_size_page(512).replace("'W'", &format!("'{}'", "W".repeat(53)));
    let budget = Budget {
        max_memory_bytes: 64 * 1024 * 1024,
        ..Budget::default()
    };
    for screen in PHONE_SIZES {
        let png = render_with(&src, screen, &budget).expect("renders within the budget");
        let img = image::load_from_memory(&png).expect("a PNG").to_rgba8();
        assert_eq!(img.dimensions(), (screen.width, screen.height));
        let dark = img.pixels().filter(|p| p.0[0] < 128).count();
        assert!(
            dark > 100_000,
            "the glyphs are not drawn ({dark} dark pixels)"
        );
    }
}

#[test]
fn methods_calling_each_other_ten_ways_seven_deep_are_refused_by_the_step_limit() {
    let e = exceeded(&fan_out_page(10, 7), PHONE_1080X1920, &Budget::default());
    assert_eq!(e, Exceeded::EvalSteps { max: 200_000 });
    assert!(e.to_string().contains("evaluation step limit"), "{e}");
    // Three ways, four deep is an ordinary page of 27 rows.
    assert!(render_with(&fan_out_page(3, 4), PHONE_1080X1920, &Budget::default()).is_ok());
}

/// Locals that double a text refuse it before it is made: nothing near the limit is
/// allocated (the cap of this binary would abort long before 2^40 bytes).
#[test]
fn text_doubled_by_locals_is_refused_by_the_memory_limit() {
    let mut locals = String::from("    final t0 = 'abcdefgh';\n");
    for i in 1..=40 {
        locals.push_str(&format!("    final t{i} = '$t{}$t{}';\n", i - 1, i - 1));
    }
    let budget = Budget {
        max_memory_bytes: 16 * 1024 * 1024,
        ..Budget::default()
    };
    let e = exceeded(&page(&locals, "Text(t40)"), PHONE_1080X1920, &budget);
    assert_eq!(
        e,
        Exceeded::Memory {
            what: "text",
            max: 16 * 1024 * 1024
        }
    );
}

/// Widgets doubled by locals: each copy out of a variable is charged node by node.
#[test]
fn widgets_doubled_by_locals_are_refused_by_the_step_limit() {
    let mut locals = String::from("    final w0 = Text('x');\n");
    for i in 1..=40 {
        locals.push_str(&format!(
            "    final w{i} = Row(children: [w{}, w{}]);\n",
            i - 1,
            i - 1
        ));
    }
    let e = exceeded(&page(&locals, "w40"), PHONE_1080X1920, &Budget::default());
    assert_eq!(e, Exceeded::EvalSteps { max: 200_000 });
}

#[test]
fn widgets_nested_past_the_depth_limit_are_refused() {
    let mut locals = String::from("    final p0 = Text('x');\n");
    for i in 1..=200 {
        locals.push_str(&format!(
            "    final p{i} = Padding(padding: EdgeInsets.all(1), child: p{});\n",
            i - 1
        ));
    }
    let e = exceeded(&page(&locals, "p200"), PHONE_1080X1920, &Budget::default());
    assert_eq!(e, Exceeded::Depth { max: 128 });
}

#[test]
fn too_many_glyphs_and_too_many_boxes_are_refused() {
    let long = format!("Text('{}')", "x".repeat(20_001));
    let e = exceeded(&page("", &long), PHONE_1080X1920, &Budget::default());
    assert_eq!(e, Exceeded::Glyphs { max: 20_000 });
    let small = Budget {
        max_layout_nodes: 100,
        ..Budget::default()
    };
    let e = exceeded(&fan_out_page(3, 5), PHONE_1080X1920, &small);
    assert_eq!(e, Exceeded::LayoutNodes { max: 100 });
}

#[test]
fn a_canvas_over_the_area_limit_is_refused_before_it_is_allocated() {
    let huge = Screen {
        width: 100_000,
        height: 100_000,
        scale: 1.0,
    };
    let e = exceeded(FIXTURE_PAGE, huge, &Budget::default());
    assert_eq!(
        e,
        Exceeded::CanvasArea {
            pixels: 10_000_000_000,
            max: 4_000_000
        }
    );
}

#[test]
fn a_render_past_its_time_limit_stops() {
    let none = Budget {
        time: Duration::ZERO,
        ..Budget::default()
    };
    let e = exceeded(&fan_out_page(10, 7), PHONE_1170X2532, &none);
    assert_eq!(
        e,
        Exceeded::Time {
            max: Duration::ZERO
        }
    );
    assert!(e.to_string().contains("time limit"), "{e}");
}

#[test]
fn the_fixture_page_renders_within_the_default_budget() {
    for screen in PHONE_SIZES {
        assert!(render_with(FIXTURE_PAGE, screen, &Budget::default()).is_ok());
    }
}

/// Widgets nested as deep as the parser takes in one expression, in methods calling each
/// other as deep as the renderer follows: evaluated on a thread with the stack the engine
/// renders on, and refused by the depth limit, never a stack overflow (which would abort
/// this binary).
#[test]
fn the_deepest_calls_of_the_deepest_expressions_fit_a_blocking_threads_stack() {
    let mut src = String::from(
        "class D extends StatelessWidget {\n  final OfferData offer;\n  Widget build(BuildContext context) => m1();\n",
    );
    for level in 1..=9 {
        let mut body = if level == 9 {
            "Text('x')".to_string()
        } else {
            format!("m{}()", level + 1)
        };
        for _ in 0..36 {
            body = format!("Padding(padding: EdgeInsets.all(1), child: {body})");
        }
        src.push_str(&format!("  Widget m{level}() => {body};\n"));
    }
    src.push_str("}\n");
    let e = std::thread::Builder::new()
        .stack_size(RENDER_STACK_BYTES)
        .spawn(move || exceeded(&src, PHONE_1080X1920, &Budget::default()))
        .expect("a thread")
        .join()
        .expect("no panic");
    assert_eq!(e, Exceeded::Depth { max: 128 });
}
