//! The adjustment lines of a game's production: a store refund (or its reversal) carried out
//! in a later UTC month than its purchase's, recorded when the refund's step is carried out
//! and listed by the month-close decision of the month it arrived in, and by the live
//! standing while that month runs (`billing`).
//!
//! One document per refund step in the game's `billing_adjustments` collection, created only
//! if absent ([`crate::store::Documents::insert_new`]) under the step's own id: a step carried
//! out again (a retry, a crash, two nodes at once) records its line once. A line never names
//! the player.

use offer_domain::adjustment::{AdjustmentLine, MonthLines};
use uuid::Uuid;

use crate::service::{ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// A game's adjustment lines, by refund step.
fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "billing_adjustments")
}

/// Records `line` under `step_id` (unique per refund step), once: a line recorded before
/// under that id stands.
pub async fn record(
    state: &Services,
    game_id: Uuid,
    step_id: &str,
    line: &AdjustmentLine,
) -> ServiceResult<()> {
    state
        .store
        .insert_new(collection(game_id), step_id, encode(line)?)
        .await?;
    Ok(())
}

/// The adjustment lines of `month` (`YYYY-MM`) as its statement lists them: what the month
/// close records in its decision, and what the live standing shows of the current month so
/// far. It reads every line of the game: refunds of earlier months' purchases are few.
pub async fn of_month(state: &Services, game_id: Uuid, month: &str) -> ServiceResult<MonthLines> {
    let mut lines = Vec::new();
    for (_, bytes) in state.store.list(collection(game_id)).await? {
        let line: AdjustmentLine = decode(&bytes)?;
        if line.month == month {
            lines.push(line);
        }
    }
    Ok(MonthLines::of(lines))
}
