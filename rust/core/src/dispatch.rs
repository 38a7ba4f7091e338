//! Native dispatchers on counting platforms: the [`View`] a dispatcher sees, the
//! [`Dispatcher`] trait, the queue orderings ([`Order`]), the dispatcher parameters
//! ([`Params`]) and the registry ([`make_dispatcher_with`]). The list dispatchers
//! `fifo`, `sjf` and `ljf` (`dispatchlab.dispatch.priority`) are in [`crate::list`],
//! `easy` and `conservative` (`dispatchlab.dispatch.backfill`) in [`crate::backfill`].

use crate::backfill::Backfill;
use crate::list::Sorted;
use crate::state::RunningSet;
use crate::Error;

/// What a dispatcher sees at a pass (read-only).
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// the current time (s)
    pub now: i64,
    /// cores free now
    pub free_cores: i64,
    /// the waiting job rows, in queue order
    pub queue: &'a [u32],
    /// cores per job row
    pub units: &'a [i64],
    /// each job row's estimate at submission (s)
    pub estimate: &'a [i64],
    /// the running jobs, in planned-end order (raw planned ends: see
    /// [`View::releases`])
    pub running: &'a RunningSet,
    /// how many completions and expiry passes (running jobs given a new estimate or
    /// counted as ending now) the run has had: equal at two passes when only
    /// submissions happened between them (and the earlier pass's own starts)
    pub changes: u64,
}

impl View<'_> {
    /// The running jobs' `(planned end, cores)` in planned-end order, a planned end
    /// already past counting as now (the Python view's `running.est_end`).
    pub fn releases(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let now = self.now;
        self.running
            .entries()
            .iter()
            .map(move |e| (e.est_end.max(now), e.units))
    }
}

/// What a dispatcher that keeps state between passes may read beside the [`View`]
/// (the Python `View`'s `changed`, `start_time` and `woken`; see
/// [`Dispatcher::dispatch_in`]).
#[derive(Debug, Clone, Copy)]
pub struct PassContext<'a> {
    /// each job row's start time (s); -1 for a job not started
    pub start: &'a [i64],
    /// the jobs queued since this dispatcher's previous call, in event order
    pub submitted: &'a [u32],
    /// the jobs that ended (completed or killed) since its previous call, in event order
    pub completed: &'a [u32],
    /// the running jobs given a new estimate since its previous call (expiry)
    pub reestimated: &'a [u32],
    /// whether a wake-up it asked for ([`PassRequests::wake`]) fired at this pass's time
    pub woken: bool,
}

/// What a dispatcher asks of the engine at a pass beside the jobs it starts (see
/// [`Dispatcher::dispatch_in`]); the engine empties it before each call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassRequests {
    /// waiting job rows to remove from the queue without running them (status
    /// rejected; each one counts as a change, [`View::changes`])
    pub reject: Vec<u32>,
    /// times (> now) at which to make a pass even if no job event happens then
    pub wake: Vec<i64>,
    /// times of wake-ups asked for earlier and not fired to withdraw (one each)
    pub withdraw: Vec<i64>,
    /// stop the run with this message (the dispatcher failed; the caller holds why)
    pub stop: Option<String>,
}

impl PassRequests {
    /// Whether nothing is asked.
    pub fn is_empty(&self) -> bool {
        self.reject.is_empty()
            && self.wake.is_empty()
            && self.withdraw.is_empty()
            && self.stop.is_none()
    }

    pub fn clear(&mut self) {
        self.reject.clear();
        self.wake.clear();
        self.withdraw.clear();
        self.stop = None;
    }
}

/// A dispatcher: at each pass, the job rows to start now, in order.
pub trait Dispatcher: Send {
    /// The dispatcher's registered name.
    fn name(&self) -> &'static str;

    /// Called once by the engine before the first pass with every job row's estimate
    /// at submission (the native predictors' estimates are known in advance; a
    /// rejected job's too). Default: nothing.
    fn start(&mut self, estimates: &[i64]) {
        let _ = estimates;
    }

    /// Append to `out` the rows of the waiting jobs to start now (they must fit the
    /// free cores together). Called only when the queue is not empty.
    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>);

    /// What the engine calls at a pass: [`Dispatcher::dispatch`] with what happened
    /// since the previous call (`context`) and the requests beside the starts
    /// (`requests`, empty on entry: rejections, wake-ups, a stop). The default
    /// ignores both (every native dispatcher); a dispatcher written in Python
    /// (the binding's adapter) uses them.
    fn dispatch_in(
        &mut self,
        view: &View<'_>,
        context: &PassContext<'_>,
        out: &mut Vec<u32>,
        requests: &mut PassRequests,
    ) {
        let _ = (context, requests);
        self.dispatch(view, out);
    }

    /// Whether to call the dispatcher at a pass whose queue is empty (no wake-up it
    /// asked for fired then); read at every such pass. Default: false (no native
    /// dispatcher has anything to do without waiting jobs).
    fn call_on_empty_queue(&mut self) -> bool {
        false
    }
}

/// Strict first-come-first-served: jobs start in queue order while they fit; the
/// first that does not fit blocks the queue.
#[derive(Debug, Default, Clone)]
pub struct Fifo;

impl Dispatcher for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn dispatch(&mut self, view: &View<'_>, out: &mut Vec<u32>) {
        let mut free = view.free_cores;
        for &job in view.queue {
            let u = view.units[job as usize];
            if u > free {
                return;
            }
            free -= u;
            out.push(job);
        }
    }
}

/// A queue ordering: the order in which a dispatcher tries waiting jobs. Every
/// ordering is total: ties go to the job row (queue order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// queue order (submit time, then row: ascending row)
    Fifo,
    /// ascending estimate at submission, ties by queue order (`sjf`)
    Sjf,
    /// ascending per-job rank (indexed by job row), ties by queue order: a static
    /// ordering computed by the caller (the rank of each job in the ordering's order
    /// over all jobs)
    Rank(Vec<i64>),
}

impl Order {
    /// Sort `jobs` (job rows) into this order; `estimate` is indexed by job row.
    pub fn sort(&self, jobs: &mut [u32], estimate: &[i64]) {
        match self {
            Order::Fifo => jobs.sort_unstable(),
            Order::Sjf => jobs.sort_unstable_by_key(|&j| (estimate[j as usize], j)),
            Order::Rank(rank) => jobs.sort_unstable_by_key(|&j| (rank[j as usize], j)),
        }
    }

    /// Whether this is queue order.
    pub fn is_fifo(&self) -> bool {
        *self == Order::Fifo
    }
}

/// A dispatcher parameter that names an ordering (`order` and `priority` of
/// `easy` / `conservative`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderParam {
    /// an ordering (`"fifo"` or `"fcfs"`, `"sjf"`, or a rank array)
    Order(Order),
    /// `order="priority"`: the backfill scan follows the priority
    Priority,
}

impl OrderParam {
    /// `"fifo"` (or `"fcfs"`), `"sjf"` or `"priority"` (`priority_ok`: only for `order`).
    pub fn parse(field: &'static str, name: &str, priority_ok: bool) -> Result<OrderParam, Error> {
        match name {
            "fifo" | "fcfs" => Ok(OrderParam::Order(Order::Fifo)),
            "sjf" => Ok(OrderParam::Order(Order::Sjf)),
            "priority" if priority_ok => Ok(OrderParam::Priority),
            _ => Err(Error::Input {
                field,
                row: None,
                message: format!(
                    "no native ordering {name:?} (the native ones: fifo, sjf{}, or a rank \
                     array)",
                    if priority_ok { ", priority" } else { "" }
                ),
            }),
        }
    }
}

/// The parameters of a native dispatcher (None: the dispatcher's default). Which
/// dispatcher takes which, with the semantics of its Python class:
///
/// * `sjf`, `ljf`: `skip` (walk past jobs that do not fit; default strict);
/// * `easy`: `order` (the backfill scan order, default fifo; `Priority`: the
///   priority's), `reservations` (K >= 1, default 1), `priority` (a static queue
///   priority, default fifo) and `scope` (`"backfill"`: the priority orders the
///   backfill scan; `"queue"`: the queue is sorted by it, so the head and the
///   reservations follow it);
/// * `conservative`: `order`;
/// * `fifo`: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    pub skip: Option<bool>,
    pub order: Option<OrderParam>,
    pub reservations: Option<i64>,
    pub priority: Option<Order>,
    pub scope: Option<String>,
}

impl Params {
    /// The names of the parameters given.
    fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (name, set) in [
            ("skip", self.skip.is_some()),
            ("order", self.order.is_some()),
            ("reservations", self.reservations.is_some()),
            ("priority", self.priority.is_some()),
            ("scope", self.scope.is_some()),
        ] {
            if set {
                out.push(name);
            }
        }
        out
    }

    /// An input error unless every parameter given is one of `known`.
    fn only(&self, dispatcher: &str, known: &[&'static str]) -> Result<(), Error> {
        match self.given().into_iter().find(|p| !known.contains(p)) {
            None => Ok(()),
            Some(p) => Err(Error::Input {
                field: p,
                row: None,
                message: format!(
                    "{dispatcher} has no parameter {p} (its parameters: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            }),
        }
    }
}

/// The native dispatchers by registered name with their default parameters.
pub fn make_dispatcher(name: &str) -> Result<Box<dyn Dispatcher>, Error> {
    make_dispatcher_with(name, &Params::default(), None)
}

/// The native dispatchers by registered name: `fifo`, `sjf`, `ljf`, `easy`,
/// `conservative`, with `params` (see [`Params`]; checked as the Python classes check
/// them). `n_jobs`, when given, is the length every rank array must have.
pub fn make_dispatcher_with(
    name: &str,
    params: &Params,
    n_jobs: Option<usize>,
) -> Result<Box<dyn Dispatcher>, Error> {
    if let Some(n) = n_jobs {
        let order_rank = match &params.order {
            Some(OrderParam::Order(Order::Rank(r))) => Some(r),
            _ => None,
        };
        let priority_rank = match &params.priority {
            Some(Order::Rank(r)) => Some(r),
            _ => None,
        };
        for (field, rank) in [("order", order_rank), ("priority", priority_rank)] {
            if let Some(rank) = rank.filter(|r| r.len() != n) {
                return Err(Error::Input {
                    field,
                    row: None,
                    message: format!("has {} ranks for {n} jobs", rank.len()),
                });
            }
        }
    }
    match name {
        "fifo" => {
            params.only(name, &[])?;
            Ok(Box::new(Fifo))
        }
        "sjf" | "ljf" => {
            params.only(name, &["skip"])?;
            let skip = params.skip.unwrap_or(false);
            Ok(Box::new(if name == "sjf" {
                Sorted::sjf(skip)
            } else {
                Sorted::ljf(skip)
            }))
        }
        "easy" => {
            params.only(name, &["order", "reservations", "priority", "scope"])?;
            let k = params.reservations.unwrap_or(1);
            if k < 1 {
                return Err(Error::Input {
                    field: "reservations",
                    row: None,
                    message: format!("reservations must be an integer >= 1, got {k}"),
                });
            }
            let k = usize::try_from(k).unwrap_or(usize::MAX);
            Ok(Box::new(Backfill::new(
                "easy",
                Some(k),
                params
                    .order
                    .clone()
                    .unwrap_or(OrderParam::Order(Order::Fifo)),
                params.priority.clone().unwrap_or(Order::Fifo),
                params.scope.as_deref().unwrap_or("backfill"),
            )?))
        }
        "conservative" => {
            params.only(name, &["order"])?;
            Ok(Box::new(Backfill::new(
                "conservative",
                None,
                params
                    .order
                    .clone()
                    .unwrap_or(OrderParam::Order(Order::Fifo)),
                Order::Fifo,
                "backfill",
            )?))
        }
        _ => Err(Error::Input {
            field: "dispatcher",
            row: None,
            message: format!(
                "no native dispatcher {name:?} (the native ones: fifo, sjf, ljf, easy, \
                 conservative)"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_break_ties_by_queue_order() {
        let est = [5, 3, 5, 1, 3];
        let mut jobs = vec![4, 2, 0, 3, 1];
        Order::Sjf.sort(&mut jobs, &est);
        assert_eq!(jobs, vec![3, 1, 4, 0, 2]);
        Order::Fifo.sort(&mut jobs, &est);
        assert_eq!(jobs, vec![0, 1, 2, 3, 4]);
        Order::Rank(vec![2, 0, 2, 9, 1]).sort(&mut jobs, &est);
        assert_eq!(jobs, vec![1, 4, 0, 2, 3]);
    }

    #[test]
    fn unknown_names_and_parameters_are_input_errors() {
        assert!(matches!(
            make_dispatcher("lifo"),
            Err(Error::Input {
                field: "dispatcher",
                ..
            })
        ));
        let skip = Params {
            skip: Some(true),
            ..Params::default()
        };
        let e = make_dispatcher_with("easy", &skip, None).err().unwrap();
        assert_eq!(
            e.to_string(),
            "skip: easy has no parameter skip (its parameters: order, reservations, \
             priority, scope)"
        );
        let zero = Params {
            reservations: Some(0),
            ..Params::default()
        };
        assert!(make_dispatcher_with("easy", &zero, None).is_err());
        let rank = Params {
            order: Some(OrderParam::Order(Order::Rank(vec![0, 1]))),
            ..Params::default()
        };
        let e = make_dispatcher_with("conservative", &rank, Some(3))
            .err()
            .unwrap();
        assert_eq!(e.to_string(), "order: has 2 ranks for 3 jobs");
    }
}
