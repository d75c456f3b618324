//! One game's money events combined into one script call while the game's calls are in
//! flight.
//!
//! Each game has a lane, with at most [`MAX_IN_FLIGHT`] script calls out at once. An event
//! of a game with fewer calls out goes at once, alone (no timer, no added wait at one event
//! in flight). While the game has all its calls out, further events of the game queue in its
//! lane; when a call returns, the queued events (at most [`MAX_BATCH`]) go in one call of the
//! same script in its place, in the order they arrived, and so on until the lane is empty.
//! Under load a game's events thus share round trips: one call per batch instead of one per
//! event. All of one game's keys share its hash tag, so a batch is one slot on a Redis
//! Cluster. Events of one game in different calls have no order between them beyond the
//! order Redis receives the calls in; a session's own events are never in flight together
//! (it waits for each answer).
//!
//! Every event keeps its own checks and its own answer (see [`super::money`]): one event's
//! refusal does not touch the others of its batch. A failed call (Redis unreachable, no
//! answer within the store's timeout) answers every event of that batch
//! [`StoreError::Unavailable`]. An event waits at most the store's timeout from its arrival,
//! in the queue and in its call together; one whose caller stopped waiting before its batch
//! left is dropped from the batch unsent. As with a single call, an event whose answer did
//! not arrive in time may still have been applied: the client's retry with the same `tx_id`
//! answers `Duplicate`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
use uuid::Uuid;

use super::super::{MoneyOutcome, StoreError, StoreResult};
use super::conn::CommandConn;
use super::money::{self, MoneyCall, MoneyScripts};

/// The most events in one call: bounds the time one script holds the Redis server.
pub(super) const MAX_BATCH: usize = 64;

/// The most calls of one game out at once. Two, so that Redis runs one batch while this node
/// answers the events of the other and queues the next: with one, the node and Redis take
/// turns instead of working at the same time. Both go over the one command connection, so
/// Redis runs them in the order they were sent.
pub(super) const MAX_IN_FLIGHT: usize = 2;

/// One game's calls in flight and the items that arrived while as many were out as a game
/// may have.
#[derive(Debug)]
struct Lane<T> {
    in_flight: usize,
    queue: Vec<T>,
}

/// The lanes of the games that have a call in flight, each with the items that arrived
/// since, in order. A queue holds items only while its game has `limit` calls out.
#[derive(Debug)]
pub(super) struct Lanes<T> {
    lanes: HashMap<Uuid, Lane<T>>,
    limit: usize,
}

impl<T> Lanes<T> {
    /// No lane yet; at most `limit` (at least 1) calls of one game out at once.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            lanes: HashMap::new(),
            limit: limit.max(1),
        }
    }

    /// A new item of `game` arrives: `None` when fewer than `limit` calls of the game are
    /// out (the caller sends its item now, as one more call in flight), otherwise the
    /// game's queue to push the item onto.
    pub(super) fn enter(&mut self, game: Uuid) -> Option<&mut Vec<T>> {
        let lane = self.lanes.entry(game).or_insert_with(|| Lane {
            in_flight: 0,
            queue: Vec::new(),
        });
        if lane.in_flight < self.limit {
            lane.in_flight += 1;
            None
        } else {
            Some(&mut lane.queue)
        }
    }

    /// A call of `game` returned: the queued items to send next in its place (at most `max`,
    /// the oldest first), or none, and the game has one call fewer in flight.
    pub(super) fn after_call(&mut self, game: Uuid, max: usize) -> Vec<T> {
        let Entry::Occupied(mut entry) = self.lanes.entry(game) else {
            return Vec::new();
        };
        let lane = entry.get_mut();
        if lane.queue.is_empty() {
            lane.in_flight = lane.in_flight.saturating_sub(1);
            if lane.in_flight == 0 {
                entry.remove();
            }
            Vec::new()
        } else if lane.queue.len() <= max {
            std::mem::take(&mut lane.queue)
        } else {
            lane.queue.drain(..max).collect()
        }
    }
}

/// How an arriving event goes: now, alone, or in its game's next batch.
enum Turn {
    /// Fewer than [`MAX_IN_FLIGHT`] calls of the game were out (boxed: an event's keys and
    /// arguments are large beside a receiver).
    Now(Box<MoneyCall>),
    /// Queued; the answer comes here.
    Queued(oneshot::Receiver<StoreResult<MoneyOutcome>>),
}

/// An event queued behind its game's call in flight, and where its answer goes.
#[derive(Debug)]
struct Waiting {
    call: MoneyCall,
    answer: oneshot::Sender<StoreResult<MoneyOutcome>>,
}

/// What the batcher and its drain tasks share.
struct Shared {
    conn: CommandConn,
    scripts: MoneyScripts,
    timeout: Duration,
    lanes: Mutex<Lanes<Waiting>>,
}

impl Shared {
    /// The lanes; a panic while they were held cannot leave them inconsistent (every change
    /// is one map operation), so a poisoned lock is taken over.
    fn lanes(&self) -> MutexGuard<'_, Lanes<Waiting>> {
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A call of `game` returned (or its caller went away): sends what queued meanwhile
    /// from a task of its own, so that the caller has its answer at once.
    fn hand_on(self: &Arc<Self>, game: Uuid) {
        let batch = self.lanes().after_call(game, MAX_BATCH);
        if batch.is_empty() {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(Arc::clone(self).drain(game, batch));
            }
            // No runtime to send from (only while one shuts down): every queued event is
            // answered unavailable by its dropped sender, and the lane is emptied.
            Err(_) => while !self.lanes().after_call(game, MAX_BATCH).is_empty() {},
        }
    }

    /// Sends `game`'s batches one call each until its lane is empty.
    async fn drain(self: Arc<Self>, game: Uuid, mut batch: Vec<Waiting>) {
        loop {
            batch.retain(|waiting| !waiting.answer.is_closed());
            if !batch.is_empty() {
                let calls: Vec<&MoneyCall> = batch.iter().map(|waiting| &waiting.call).collect();
                let answers = money::run(&self.conn, &self.scripts, self.timeout, &calls).await;
                match answers {
                    Ok(answers) => {
                        for (waiting, answer) in batch.into_iter().zip(answers) {
                            // A caller that stopped waiting no longer wants its answer.
                            let _ = waiting.answer.send(answer);
                        }
                    }
                    Err(err) => {
                        for waiting in batch {
                            let _ = waiting.answer.send(Err(err.clone()));
                        }
                    }
                }
            }
            batch = self.lanes().after_call(game, MAX_BATCH);
            if batch.is_empty() {
                return;
            }
        }
    }
}

/// While the first event of a lane is in its call, the lane is in flight; when that call
/// returns, or its caller drops the future mid-call, the queue is handed on.
struct InFlight<'a> {
    shared: &'a Arc<Shared>,
    game: Uuid,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.shared.hand_on(self.game);
    }
}

/// The wallet script's caller: per game, at most [`MAX_IN_FLIGHT`] calls out and the events
/// that arrive meanwhile combined into the next.
pub(super) struct MoneyBatcher {
    shared: Arc<Shared>,
}

impl MoneyBatcher {
    /// Calls `scripts` (the wallet scripts, loaded) over `conn`, each call bounded by
    /// `timeout`.
    pub(super) fn new(conn: CommandConn, scripts: MoneyScripts, timeout: Duration) -> Self {
        Self {
            shared: Arc::new(Shared {
                conn,
                scripts,
                timeout,
                lanes: Mutex::new(Lanes::new(MAX_IN_FLIGHT)),
            }),
        }
    }

    /// The wallet scripts, loaded into the server (every master of a cluster) at connect.
    pub(super) fn scripts(&self) -> &MoneyScripts {
        &self.shared.scripts
    }

    /// Applies one event of `game`: at once when fewer than [`MAX_IN_FLIGHT`] calls of the
    /// game are out, else in the game's next batch.
    pub(super) async fn apply(&self, game: Uuid, call: MoneyCall) -> StoreResult<MoneyOutcome> {
        let turn = match self.shared.lanes().enter(game) {
            None => Turn::Now(Box::new(call)),
            Some(queue) => {
                let (answer, answered) = oneshot::channel();
                queue.push(Waiting { call, answer });
                Turn::Queued(answered)
            }
        };
        match turn {
            Turn::Now(call) => {
                let in_flight = InFlight {
                    shared: &self.shared,
                    game,
                };
                let answer = self.apply_alone(&call).await;
                drop(in_flight);
                answer
            }
            Turn::Queued(answered) => {
                let timeout = self.shared.timeout;
                match tokio::time::timeout(timeout, answered).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(_)) => Err(StoreError::Unavailable(
                        "apply_money: the batch was dropped".into(),
                    )),
                    Err(_) => Err(StoreError::Unavailable(format!(
                        "apply_money: no answer within {timeout:?}"
                    ))),
                }
            }
        }
    }

    /// Applies one event in a call of its own, whatever else is in flight: one round trip
    /// per event, the load tool's baseline for what the batching saves.
    pub(super) async fn apply_alone(&self, call: &MoneyCall) -> StoreResult<MoneyOutcome> {
        let shared = &self.shared;
        first(money::run(&shared.conn, &shared.scripts, shared.timeout, &[call]).await)
    }
}

/// The one answer of a call of one event.
fn first(answers: StoreResult<Vec<StoreResult<MoneyOutcome>>>) -> StoreResult<MoneyOutcome> {
    answers?
        .pop()
        .unwrap_or_else(|| Err(StoreError::Corrupt("wallet script answered nothing".into())))
}

#[cfg(test)]
mod tests {
    use super::Lanes;
    use uuid::Uuid;

    #[test]
    fn a_lane_queues_while_its_calls_are_out_and_hands_on_in_batches() {
        let mut lanes: Lanes<u32> = Lanes::new(2);
        let (g, h) = (Uuid::new_v4(), Uuid::new_v4());
        // Fewer than two calls out: the first two items go now.
        assert!(lanes.enter(g).is_none());
        assert!(lanes.enter(g).is_none());
        // Later items of the same game queue, in order; another game's lane is its own.
        for item in 1..=5 {
            lanes.enter(g).expect("two out").push(item);
        }
        assert!(lanes.enter(h).is_none());
        // Each returned call hands on at most `max` of the oldest, in its place.
        assert_eq!(lanes.after_call(g, 2), [1, 2]);
        assert_eq!(lanes.after_call(g, 2), [3, 4]);
        lanes.enter(g).expect("still two out").push(6);
        assert_eq!(lanes.after_call(g, 2), [5, 6]);
        // An empty queue: one call fewer out, so the next item goes now again.
        assert!(lanes.after_call(g, 2).is_empty());
        assert!(lanes.enter(g).is_none());
        lanes.enter(g).expect("two out again").push(7);
        assert_eq!(lanes.after_call(g, 2), [7]);
        // Both calls back with nothing queued: the game is idle.
        assert!(lanes.after_call(g, 2).is_empty());
        assert!(lanes.after_call(g, 2).is_empty());
        assert!(lanes.after_call(g, 2).is_empty());
        assert!(lanes.enter(g).is_none());
        assert!(lanes.after_call(h, 2).is_empty());
        assert!(lanes.enter(h).is_none());
    }
}
