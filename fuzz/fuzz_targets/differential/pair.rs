//! The queue under test beside the reference model: each operation applied to both and
//! every rule of the contract checked.

use super::*;

/// How far the clock may move: `range().max_tick`, and for a walked queue the caps.
pub(crate) struct Limits {
    pub(crate) max_tick: Tick,
    /// Per move and left in total, in ticks, for a walked queue.
    pub(crate) walk: Option<(Tick, Tick)>,
}

impl Limits {
    /// Where a move from `now` that wants to reach `wanted` may go.
    fn reach(&mut self, now: Tick, wanted: Tick) -> Tick {
        let mut to = wanted.min(self.max_tick).max(now);
        if let Some((per_move, left)) = &mut self.walk {
            to = to.min(now.saturating_add((*per_move).min(*left)));
            *left -= to - now;
        }
        to
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Pending,
    Fired,
    Stopped,
}

/// One start, as both queues know it. Its value is its index.
pub(crate) struct Timer {
    pub(crate) subject: TimerId,
    pub(crate) model: TimerId,
    pub(crate) deadline: Tick,
    /// `max(deadline, now at start) + window.late`: no longer pending once a move reaches it.
    pub(crate) latest: Tick,
    pub(crate) early: bool,
    pub(crate) state: State,
    pub(crate) fired_in_model: bool,
}

pub(crate) struct Pair<Q> {
    pub(crate) subject: Q,
    pub(crate) model: ReferenceQueue<u64>,
    pub(crate) exact: bool,
    pub(crate) label: String,
    pub(crate) limits: Limits,
    pub(crate) timers: Vec<Timer>,
    /// The subject's handles, to their timer.
    pub(crate) handles: HashMap<TimerId, usize>,
    /// The subject's pending timers by `(latest, index)`.
    pub(crate) pending: BTreeSet<(Tick, usize)>,
}

macro_rules! ensure {
    ($pair:expr, $condition:expr, $($what:tt)*) => {
        if !$condition {
            $pair.fail(format!($($what)*));
        }
    };
}

impl<Q: TimerQueue<u64>> Pair<Q> {
    #[cold]
    fn fail(&self, what: String) -> ! {
        panic!(
            "{} ({}): {what} (now {}, {} timers started)",
            self.label,
            if self.exact { "exact" } else { "approximate" },
            self.model.now(),
            self.timers.len(),
        );
    }

    fn now(&self) -> Tick {
        self.model.now()
    }

    fn picked(&self, k: usize) -> Option<usize> {
        let last = self.timers.len().checked_sub(1)?;
        Some(last - k % self.timers.len())
    }

    /// The tick `deadline` names now, or `None` when the range forbids it.
    fn resolve(&self, deadline: Deadline) -> Option<Tick> {
        let now = self.now();
        let tick = match deadline {
            Deadline::After(delay) => now.saturating_add(delay),
            Deadline::Before(back) => now.saturating_sub(back),
            Deadline::End(back) => Tick::MAX - back,
            Deadline::SameAs(k) => self.timers[self.picked(k)?].deadline,
        };
        let range = self.subject.range();
        (tick.saturating_sub(now) <= range.max_delay && tick <= range.max_tick).then_some(tick)
    }

    fn window(&self, deadline: Tick) -> Window {
        if self.exact {
            Window::EXACT
        } else {
            self.subject.window(deadline)
        }
    }

    /// Records a timer the subject just started (or restarted) with `handle`, and starts it
    /// in the model.
    fn record(&mut self, handle: TimerId, deadline: Tick, window: Window) {
        let index = self.timers.len();
        let model = self.model.start(deadline, index as u64);
        if let Some(earlier) = self.handles.insert(handle, index) {
            self.fail(format!(
                "start of timer {index} returned {handle:?}, the handle of timer {earlier}"
            ));
        }
        let latest = deadline.max(self.now()).saturating_add(window.late);
        self.timers.push(Timer {
            subject: handle,
            model,
            deadline,
            latest,
            early: window.early,
            state: State::Pending,
            fired_in_model: false,
        });
        self.pending.insert((latest, index));
    }

    fn start(&mut self, deadline: Deadline) {
        let Some(deadline) = self.resolve(deadline) else {
            return;
        };
        let window = self.window(deadline);
        let timer = self.timers.len();
        log(Event::Start { timer, deadline });
        let handle = self.subject.start(deadline, timer as u64);
        self.record(handle, deadline, window);
    }

    /// Checks what the subject's stop (or restart) of timer `index` returned, and stops it
    /// in the model.
    fn stopped(&mut self, index: usize, got: Option<u64>, what: &str) {
        let timer = &self.timers[index];
        let expected = (timer.state == State::Pending).then_some(index as u64);
        ensure!(
            self,
            got == expected,
            "{what} of timer {index} ({:?}, deadline {}, {:?}) returned {got:?}",
            timer.subject,
            timer.deadline,
            timer.state
        );
        let in_model = self.model.stop(timer.model);
        if self.exact {
            ensure!(
                self,
                got == in_model,
                "{what} of timer {index} returned {got:?}, the reference {in_model:?}"
            );
        }
        let timer = &mut self.timers[index];
        if got.is_some() {
            timer.state = State::Stopped;
            self.pending.remove(&(timer.latest, index));
        }
    }

    fn stop(&mut self, k: usize) {
        if let Some(index) = self.picked(k) {
            log(Event::Stop { timer: index });
            let got = self.subject.stop(self.timers[index].subject);
            self.stopped(index, got, "stop");
        }
    }

    fn stop_forged(&mut self, id: TimerId) {
        log(Event::StopForged { id });
        let got = self.subject.stop(id);
        match self.handles.get(&id) {
            Some(&index) => self.stopped(index, got, "stop (forged)"),
            None => ensure!(
                self,
                got.is_none(),
                "stop of {id:?}, a handle never issued, returned {got:?}"
            ),
        }
    }

    fn restart(&mut self, k: usize, deadline: Deadline) {
        let Some(tick) = self.resolve(deadline) else {
            return;
        };
        let window = self.window(tick);
        let value = self.timers.len() as u64;
        let old = self.picked(k);
        // A handle no queue issues (its arena slots stop short of u32::MAX): a plain start.
        let old_handle = old.map_or(TimerId::from_parts(u32::MAX - 1, 1), |i| {
            self.timers[i].subject
        });
        log(Event::Restart {
            old,
            timer: value as usize,
            deadline: tick,
        });
        let (handle, got) = self.subject.restart(old_handle, tick, value);
        match old {
            Some(index) => self.stopped(index, got, "restart"),
            None => ensure!(
                self,
                got.is_none(),
                "restart of a handle never issued returned {got:?}"
            ),
        }
        self.record(handle, tick, window);
    }

    /// Advances both to `to`; returns how many timers the subject fired.
    fn advance(&mut self, to: Tick) -> usize {
        log(Event::Advance { to });
        let mut expected = Vec::new();
        self.model
            .advance(to, |_, value, deadline| expected.push((deadline, value)));
        for &(_, value) in &expected {
            self.timers[value as usize].fired_in_model = true;
        }
        let mut fired = Vec::new();
        self.subject
            .advance(to, |id, value, deadline| fired.push((id, value, deadline)));
        for &(id, value, deadline) in &fired {
            let Some(timer) = self.timers.get(value as usize) else {
                self.fail(format!("advance({to}) fired value {value}, never given"));
            };
            ensure!(
                self,
                id == timer.subject && deadline == timer.deadline,
                "advance({to}) fired timer {value} as {id:?} with deadline {deadline}; \
                 its start gave {:?} and {}",
                timer.subject,
                timer.deadline
            );
            ensure!(
                self,
                timer.state == State::Pending,
                "advance({to}) fired timer {value} (deadline {deadline}), which was {:?}",
                timer.state
            );
            ensure!(
                self,
                timer.fired_in_model || timer.early,
                "advance({to}) fired timer {value} early: deadline {deadline}"
            );
            let latest = timer.latest;
            self.timers[value as usize].state = State::Fired;
            self.pending.remove(&(latest, value as usize));
        }
        if let Some(&(latest, index)) = self.pending.first() {
            ensure!(
                self,
                latest > to,
                "timer {index} (deadline {}) is still pending at {to}, past its bound {latest}",
                self.timers[index].deadline
            );
        }
        if self.exact {
            for pair in fired.windows(2) {
                ensure!(
                    self,
                    pair[0].2 <= pair[1].2,
                    "advance({to}) fired deadline {} before {}",
                    pair[0].2,
                    pair[1].2
                );
            }
            let mut got: Vec<(Tick, u64)> = fired.iter().map(|&(_, v, d)| (d, v)).collect();
            got.sort_unstable();
            expected.sort_unstable();
            ensure!(
                self,
                got == expected,
                "advance({to}) fired {got:?}, the reference {expected:?}"
            );
        }
        fired.len()
    }

    /// A clock move towards `wanted`, as far as the limits allow; returns how many fired and
    /// whether the move was cut short.
    fn move_towards(&mut self, wanted: Tick) -> (usize, bool) {
        let to = self.limits.reach(self.now(), wanted);
        (self.advance(to), to < wanted)
    }

    fn sleep(&mut self) {
        let steps = self.subject.next_deadline_steps();
        let earliest = self.model.next_deadline();
        log(Event::NextDeadline);
        let mut bound = self.subject.next_deadline();
        ensure!(
            self,
            bound.is_none() == self.pending.is_empty(),
            "next_deadline {bound:?} with {} timers pending",
            self.pending.len()
        );
        for round in 0..steps {
            let Some(tick) = bound else {
                if round > 0 {
                    self.fail("next_deadline became None with timers pending".to_string());
                }
                return;
            };
            if self.exact {
                let earliest = earliest.expect("pending in the subject, hence in the model");
                ensure!(
                    self,
                    tick <= earliest,
                    "next_deadline {tick} is past the earliest deadline {earliest}"
                );
                ensure!(
                    self,
                    steps > 1 || tick == earliest,
                    "next_deadline {tick}, the earliest deadline {earliest}: with one step \
                     it must be the deadline itself"
                );
            }
            let wanted = tick.max(self.now());
            let (fired, cut) = self.move_towards(wanted);
            if fired > 0 || cut {
                return;
            }
            log(Event::NextDeadline);
            bound = self.subject.next_deadline();
        }
        self.fail(format!(
            "{steps} rounds of advance(next_deadline) fired nothing (earliest {earliest:?})"
        ));
    }

    pub(crate) fn apply(&mut self, op: Op) {
        match op {
            Op::Start(deadline) => self.start(deadline),
            Op::Stop(k) => self.stop(k),
            Op::StopForged(index, generation) => {
                self.stop_forged(TimerId::from_parts(index, generation))
            }
            Op::Restart(k, deadline) => self.restart(k, deadline),
            Op::Advance(span) => {
                self.move_towards(self.now().saturating_add(span));
            }
            Op::Tick(n) => {
                for _ in 0..n {
                    self.move_towards(self.now().saturating_add(1));
                }
            }
            Op::Sleep => self.sleep(),
        }
        self.check_counts();
    }

    pub(crate) fn check_counts(&self) {
        let (len, now) = (self.subject.len(), self.subject.now());
        ensure!(
            self,
            len == self.pending.len(),
            "len() is {len}, {} timers pending",
            self.pending.len()
        );
        ensure!(
            self,
            !self.exact || len == self.model.len(),
            "len() is {len}, the reference's {}",
            self.model.len()
        );
        ensure!(
            self,
            now == self.now(),
            "now() is {now}, the reference's {}",
            self.now()
        );
    }

    /// Drains the clock (as far as the limits allow), stops every handle, and checks that the
    /// queue is empty and stays silent.
    pub(crate) fn finish(&mut self) {
        // A skipping queue goes to the end of time; a walker only as far as the last bound
        // of a timer it was given (a move of at most one cap), stopped ones included so that
        // their deferred entries come due in the second move.
        let end = match self.limits.walk {
            Some(_) => self.timers.iter().map(|t| t.latest).max().unwrap_or(0),
            None => Tick::MAX,
        };
        if let Some((per_move, left)) = &mut self.limits.walk {
            *left = *per_move;
        }
        self.move_towards(end);
        for index in 0..self.timers.len() {
            let got = self.subject.stop(self.timers[index].subject);
            self.stopped(index, got, "the final stop");
        }
        self.check_counts();
        log(Event::NextDeadline);
        let bound = self.subject.next_deadline();
        ensure!(
            self,
            bound.is_none(),
            "next_deadline {bound:?} once all is stopped"
        );
        if let Some((per_move, left)) = &mut self.limits.walk {
            *left = *per_move;
        }
        let (fired, _) = self.move_towards(end);
        ensure!(
            self,
            fired == 0,
            "{fired} fired after every timer was stopped"
        );
        self.check_counts();
    }
}
