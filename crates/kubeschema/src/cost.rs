//! CEL cost: the bounds the API server puts on `x-kubernetes-validations`, so that a rule
//! over a large list ends (as a finding) instead of running until killed.
//!
//! The API server bounds CEL twice (cel-go's cost model, with Kubernetes' limits):
//!
//! - **when the CRD is written**, each rule's cost is estimated from the schema: a list is as
//!   long as its `maxItems`, else as many of its smallest items as fit in a request
//!   (apiextensions-apiserver `pkg/apiserver/schema/cel/model/schemas.go`), and a rule whose
//!   estimate is over `StaticEstimatedCostLimit`, or rules whose estimates times the number of
//!   times each can run add up to more than `StaticEstimatedCRDCostLimit`, make the CRD
//!   rejected (`pkg/apis/apiextensions/validation/validation.go`);
//! - **when an object is validated**, each rule's evaluation stops past `PerCallLimit`, and all
//!   the rules of one object share `RuntimeCELCostBudget` (apiserver `pkg/apis/cel/config.go`,
//!   apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`).
//!
//! The `cel` crate has no cost hook, so both are done here on its AST:
//!
//! - a rule is compiled once more with a call to [`COST_FUNCTION`] in every comprehension
//!   (in the loop condition, or in the guard or element of a `map`/`filter` step, so that the
//!   crate's fast path for those stays), charging the cost of one iteration to a meter of the
//!   evaluating thread; past the limit the call fails, and every loop above it stops at its
//!   next iteration. The meter also checks the caller's deadline every `CheckFrequency`
//!   iterations, as cel-go checks for interruption.
//! - The estimate walks the same AST with the sizes the schema gives.
//!
//! What differs from the API server: costs are counted as a **lower bound** of cel-go's
//! (an identifier or field selection chain 1, a function call 1, a list or map literal 1, the
//! logical operators and `@` internals 0, only the first operand of `&&`, `||` and `?:` but
//! the cheaper branch; a function on a string or list counts 1 whatever its size; a range of
//! unknown size counts no iteration; `messageExpression` is not estimated). So a rule fluxsim
//! finds over a limit is over it for the API server too, and a rule the API server finds
//! just over a limit may pass here: the bound is on work, never a new false finding.

use std::cell::RefCell;
use std::time::Instant;

use cel::common::ast::{operators, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::common::types::CelInt;
use cel::common::value::CowVal;
use cel::ExecutionError;
use serde_json::Value;

/// apiserver `pkg/apis/cel/config.go` `PerCallLimit`: the actual cost one evaluation of one
/// rule may reach ("roughly 0.1 second").
pub(crate) const PER_CALL_LIMIT: u64 = 1_000_000;
/// apiserver `pkg/apis/cel/config.go` `RuntimeCELCostBudget`: the actual cost all the rules
/// of one custom resource may reach together ("roughly 1 seconds").
pub(crate) const RUNTIME_CEL_COST_BUDGET: u64 = 10_000_000;
/// apiserver `pkg/apis/cel/config.go` `CheckFrequency`: iterations between two checks for
/// interruption (here: the deadline).
pub(crate) const CHECK_FREQUENCY: u64 = 100;
/// apiserver `pkg/apis/cel/config.go` `MaxRequestSizeBytes`: what an unbounded list,
/// map or string is estimated to fill.
pub(crate) const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;
/// apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`
/// `StaticEstimatedCostLimit`: the largest estimated cost of one rule.
pub(crate) const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`
/// `StaticEstimatedCRDCostLimit`: the largest estimated total of a CRD version's rules.
pub(crate) const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The function the metered AST calls: `@fluxsim_cost(cost, value)` charges `cost` and gives
/// `value` back. `@` cannot start a name in CEL source, so no rule can call or shadow it.
pub(crate) const COST_FUNCTION: &str = "@fluxsim_cost";

/// cel-go's error when an evaluation passes its cost limit (the API server matches on it).
pub(crate) const COST_LIMIT_ERROR: &str = "operation cancelled: actual cost limit exceeded";

/// Why a metered evaluation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Past its cost limit.
    CostLimit,
    /// Past the caller's deadline.
    Deadline,
}

/// The cost of one evaluation, and whether it was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Metered {
    pub(crate) cost: u64,
    pub(crate) stop: Option<Stop>,
}

struct Meter {
    limit: u64,
    cost: u64,
    ticks: u64,
    deadline: Option<Instant>,
    stop: Option<Stop>,
}

thread_local! {
    // The evaluation is synchronous on the thread that runs it: a meter per thread is the
    // meter of the one evaluation running there.
    static METER: RefCell<Option<Meter>> = const { RefCell::new(None) };
}

/// Puts the meter back to none when the evaluation ends, even by a panic.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        METER.with(|m| m.borrow_mut().take());
    }
}

/// Runs `f` (an evaluation of a metered program) with a meter of `limit`, stopping at
/// `deadline`: what `f` gives, and what it cost.
pub(crate) fn metered<T>(
    limit: u64,
    deadline: Option<Instant>,
    f: impl FnOnce() -> T,
) -> (T, Metered) {
    METER.with(|m| {
        *m.borrow_mut() = Some(Meter {
            limit,
            cost: 0,
            ticks: 0,
            deadline,
            stop: None,
        });
    });
    let guard = Installed;
    let out = f();
    let metered = METER.with(|m| {
        m.borrow().as_ref().map_or(
            Metered {
                cost: 0,
                stop: None,
            },
            |m| Metered {
                cost: m.cost,
                stop: m.stop,
            },
        )
    });
    drop(guard);
    (out, metered)
}

/// The implementation of [`COST_FUNCTION`]: charges, then gives its second argument back.
pub(crate) fn charge<'b, 'v>(
    mut args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let cost = args
        .first()
        .and_then(|a| a.downcast_ref::<CelInt>())
        .map_or(1, |i| u64::try_from(*i.inner()).unwrap_or(1));
    let stopped = METER.with(|m| {
        let mut m = m.borrow_mut();
        let Some(m) = m.as_mut() else { return false };
        if m.stop.is_none() {
            m.cost = m.cost.saturating_add(cost);
            m.ticks += 1;
            if m.cost > m.limit {
                m.stop = Some(Stop::CostLimit);
            } else if m.ticks % CHECK_FREQUENCY == 0
                && m.deadline.is_some_and(|d| Instant::now() >= d)
            {
                m.stop = Some(Stop::Deadline);
            }
        }
        m.stop.is_some()
    });
    if stopped {
        return Err(ExecutionError::function_error(
            COST_FUNCTION,
            COST_LIMIT_ERROR,
        ));
    }
    match args.pop() {
        Some(v) if args.len() == 1 => Ok(v),
        _ => Err(ExecutionError::invalid_argument_count(2, args.len() + 1)),
    }
}

/// `e` with a charge of each comprehension's iteration cost in each of its iterations.
pub(crate) fn instrument(e: &IdedExpr) -> IdedExpr {
    let mut out = e.clone();
    rewrite(&mut out, &mut Vec::new());
    out
}

fn rewrite(e: &mut IdedExpr, accus: &mut Vec<String>) {
    match &mut e.expr {
        Expr::Call(call) => {
            if let Some(t) = call.target.as_deref_mut() {
                rewrite(t, accus);
            }
            for a in &mut call.args {
                rewrite(a, accus);
            }
        }
        Expr::Comprehension(c) => {
            rewrite(&mut c.iter_range, accus);
            rewrite(&mut c.accu_init, accus);
            accus.push(c.accu_var.clone());
            let per_iteration = {
                let mut w = Walk::runtime(accus);
                w.iteration(c)
            };
            rewrite(&mut c.loop_cond, accus);
            rewrite(&mut c.loop_step, accus);
            rewrite(&mut c.result, accus);
            accus.pop();
            match append_step_charge_point(c) {
                Some(at) => wrap(at, per_iteration),
                None => wrap(&mut c.loop_cond, per_iteration),
            }
        }
        Expr::List(list) => {
            for x in &mut list.elements {
                rewrite(x, accus);
            }
        }
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let EntryExpr::MapEntry(m) = &mut entry.expr {
                    rewrite(&mut m.key, accus);
                    rewrite(&mut m.value, accus);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &mut s.entries {
                if let EntryExpr::StructField(f) = &mut entry.expr {
                    rewrite(&mut f.value, accus);
                }
            }
        }
        Expr::Select(s) => rewrite(&mut s.operand, accus),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Where a `map`/`filter` comprehension is charged: the crate evaluates
/// `@result + [expr]` (optionally under a guard) in place when its loop condition is a
/// literal (`AppendStep::of` in the crate's `objects.rs`), so the charge goes in the guard,
/// or in the appended element, and the loop condition stays a literal.
fn append_step_charge_point(c: &mut ComprehensionExpr) -> Option<&mut IdedExpr> {
    let accu = c.accu_var.clone();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if *n == accu);
    if !is_accu(&c.result) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return None;
    }
    let appends = |e: &IdedExpr| match &e.expr {
        Expr::Call(call) if call.func_name == operators::ADD && call.target.is_none() => {
            matches!(call.args.as_slice(), [lhs, rhs] if is_accu(lhs)
                && matches!(&rhs.expr, Expr::List(l) if !l.elements.is_empty()))
        }
        _ => false,
    };
    let guarded = match &c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.target.is_none() => {
            match call.args.as_slice() {
                [_, step, otherwise] if is_accu(otherwise) && appends(step) => Some(true),
                _ => None,
            }
        }
        _ if appends(&c.loop_step) => Some(false),
        _ => None,
    }?;
    let Expr::Call(call) = &mut c.loop_step.expr else {
        return None;
    };
    if guarded {
        return call.args.first_mut();
    }
    let Expr::List(list) = &mut call.args.get_mut(1)?.expr else {
        return None;
    };
    list.elements.first_mut()
}

fn wrap(e: &mut IdedExpr, cost: u64) {
    let inner = std::mem::take(e);
    let cost = i64::try_from(cost).unwrap_or(i64::MAX);
    *e = IdedExpr {
        id: inner.id,
        expr: Expr::Call(cel::common::ast::CallExpr {
            func_name: COST_FUNCTION.to_string(),
            target: None,
            args: vec![
                IdedExpr {
                    id: inner.id,
                    expr: Expr::Literal(LiteralValue::Int(CelInt::from(cost))),
                },
                inner,
            ],
        }),
    };
}

/// What the estimate knows of a value: its schema, or only how many elements it has.
#[derive(Clone, Copy)]
enum Shape<'s> {
    Schema(&'s Value),
    Elements(u64),
    Unknown,
}

/// The cost walk: at run time (each comprehension's iterations are charged by the
/// comprehension itself, so count none), or estimated from the schema (iterations as many
/// as the range's largest size).
struct Walk<'s, 'a> {
    estimate: bool,
    /// Variables in scope (the innermost last): `self`, the iteration variables.
    vars: Vec<(String, Shape<'s>)>,
    /// Accumulators in scope: their `&&`/`||` loop steps evaluate both operands.
    accus: Vec<String>,
    outer_accus: &'a [String],
}

impl<'s, 'a> Walk<'s, 'a> {
    fn runtime(accus: &'a [String]) -> Self {
        Walk {
            estimate: false,
            vars: Vec::new(),
            accus: Vec::new(),
            outer_accus: accus,
        }
    }

    fn is_accu(&self, e: &IdedExpr) -> bool {
        matches!(&e.expr, Expr::Ident(n)
            if self.accus.contains(n) || self.outer_accus.contains(n))
    }

    /// The cost of one iteration of `c`: its loop condition and step (at least 1).
    fn iteration(&mut self, c: &ComprehensionExpr) -> u64 {
        self.cost(&c.loop_cond)
            .saturating_add(self.cost(&c.loop_step))
            .max(1)
    }

    /// A lower bound of the cost of evaluating `e` once.
    fn cost(&mut self, e: &IdedExpr) -> u64 {
        match &e.expr {
            Expr::Literal(_) | Expr::Unspecified => 0,
            Expr::Ident(_) => 1,
            Expr::Select(s) => {
                if is_name_chain(&s.operand) {
                    1
                } else {
                    1 + self.cost(&s.operand)
                }
            }
            Expr::Call(call) => {
                let name = call.func_name.as_str();
                let args = &call.args;
                match (name, args.as_slice()) {
                    (operators::LOGICAL_AND | operators::LOGICAL_OR, [a, b]) => {
                        // An `all`/`exists` step (`@result && p`) evaluates `p` on every
                        // iteration the loop condition lets through.
                        let first = self.cost(a);
                        if self.is_accu(a) {
                            first.saturating_add(self.cost(b))
                        } else {
                            first
                        }
                    }
                    (operators::CONDITIONAL, [c, t, f]) => {
                        let cond = self.cost(c);
                        let branch = self.cost(t).min(self.cost(f));
                        cond.saturating_add(branch)
                    }
                    _ => {
                        let own =
                            u64::from(!name.starts_with('@') && name != operators::LOGICAL_NOT);
                        let target = call.target.as_deref().map_or(0, |t| self.cost(t));
                        args.iter().fold(own.saturating_add(target), |acc, a| {
                            acc.saturating_add(self.cost(a))
                        })
                    }
                }
            }
            Expr::List(list) => list
                .elements
                .iter()
                .fold(1, |acc, x| acc.saturating_add(self.cost(x))),
            Expr::Map(map) => map.entries.iter().fold(1, |acc, entry| match &entry.expr {
                EntryExpr::MapEntry(m) => acc
                    .saturating_add(self.cost(&m.key))
                    .saturating_add(self.cost(&m.value)),
                EntryExpr::StructField(f) => acc.saturating_add(self.cost(&f.value)),
            }),
            Expr::Struct(s) => s.entries.iter().fold(1, |acc, entry| match &entry.expr {
                EntryExpr::StructField(f) => acc.saturating_add(self.cost(&f.value)),
                EntryExpr::MapEntry(m) => acc.saturating_add(self.cost(&m.value)),
            }),
            Expr::Comprehension(c) => {
                let once = self
                    .cost(&c.iter_range)
                    .saturating_add(self.cost(&c.accu_init));
                if !self.estimate {
                    return once.saturating_add(self.cost(&c.result));
                }
                let range = self.shape(&c.iter_range);
                let n = size(range);
                let item = match range {
                    Shape::Schema(s) if ty(s) == Some("array") => {
                        s.get("items").map_or(Shape::Unknown, Shape::Schema)
                    }
                    _ => Shape::Unknown,
                };
                self.vars.push((c.iter_var.clone(), item));
                if let Some(v2) = &c.iter_var2 {
                    self.vars.push((v2.clone(), Shape::Unknown));
                }
                self.accus.push(c.accu_var.clone());
                let each = self.iteration(c);
                let result = self.cost(&c.result);
                self.accus.pop();
                if c.iter_var2.is_some() {
                    self.vars.pop();
                }
                self.vars.pop();
                once.saturating_add(n.saturating_mul(each))
                    .saturating_add(result)
            }
        }
    }

    /// What the estimate knows of the value of `e`.
    fn shape(&self, e: &IdedExpr) -> Shape<'s> {
        match &e.expr {
            Expr::Ident(name) => self
                .vars
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map_or(Shape::Unknown, |(_, s)| *s),
            Expr::Select(s) if !s.test => match self.shape(&s.operand) {
                Shape::Schema(node) => field(node, &s.field).map_or(Shape::Unknown, Shape::Schema),
                _ => Shape::Unknown,
            },
            Expr::Call(call) if call.func_name == operators::INDEX && call.args.len() == 2 => {
                match self.shape(&call.args[0]) {
                    Shape::Schema(node) => element(node).map_or(Shape::Unknown, Shape::Schema),
                    _ => Shape::Unknown,
                }
            }
            Expr::List(list) => Shape::Elements(list.elements.len() as u64),
            // `map` and `filter`: at most as many elements as their range.
            Expr::Comprehension(c)
                if matches!(&c.result.expr, Expr::Ident(n) if *n == c.accu_var)
                    && matches!(&c.accu_init.expr, Expr::List(l) if l.elements.is_empty()) =>
            {
                Shape::Elements(size(self.shape(&c.iter_range)))
            }
            _ => Shape::Unknown,
        }
    }
}

/// Is `e` a name or a selection chain on one (`self.spec.items`)? The crate resolves those
/// in one step, and cel-go reads them as one attribute.
fn is_name_chain(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Ident(_) => true,
        Expr::Select(s) => !s.test && is_name_chain(&s.operand),
        _ => false,
    }
}

fn ty(node: &Value) -> Option<&str> {
    node.get("type").and_then(Value::as_str)
}

fn int_or_string(node: &Value) -> bool {
    node.get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        == Some(true)
}

/// The `additionalProperties` schema of a map-like object, if it has one.
fn additional(node: &Value) -> Option<&Value> {
    node.get("additionalProperties").filter(|a| a.is_object())
}

/// The schema of `field` (as CEL spells it, escaped) of an object schema.
fn field<'s>(node: &'s Value, name: &str) -> Option<&'s Value> {
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        if let Some(p) = props
            .iter()
            .find(|(k, _)| crate::escape::escape(k).as_deref() == Some(name))
        {
            return Some(p.1);
        }
    }
    additional(node)
}

/// The schema of an element: a list's items, a map's values.
fn element(node: &Value) -> Option<&Value> {
    match ty(node) {
        Some("array") => node.get("items"),
        Some("object") => additional(node),
        _ => None,
    }
}

/// The most elements a value of `shape` can have.
fn size(shape: Shape<'_>) -> u64 {
    match shape {
        Shape::Schema(node) => max_elements(node),
        Shape::Elements(n) => n,
        Shape::Unknown => 0,
    }
}

fn bound(node: &Value, key: &str) -> Option<u64> {
    node.get(key)
        .and_then(Value::as_i64)
        .map(|n| u64::try_from(n).unwrap_or(0))
}

/// The most elements of a list or map: `maxItems`/`maxProperties`, else as many of the
/// smallest elements as fit in a request (apiextensions-apiserver
/// `pkg/apiserver/schema/cel/model/schemas.go`, `estimateMaxArrayItemsFromMinSize` and
/// `estimateMaxAdditionalPropertiesFromMinSize`). An object with properties only is not
/// iterable in the API server's CEL.
fn max_elements(node: &Value) -> u64 {
    if int_or_string(node) {
        return 0;
    }
    match ty(node) {
        Some("array") => bound(node, "maxItems").unwrap_or_else(|| {
            node.get("items").map_or(0, |i| {
                (MAX_REQUEST_SIZE_BYTES - 2) / (min_serialized_size(i) + 1)
            })
        }),
        Some("object") => match additional(node) {
            Some(a) => bound(node, "maxProperties")
                .unwrap_or_else(|| (MAX_REQUEST_SIZE_BYTES - 2) / (min_serialized_size(a) + 6)),
            None => 0,
        },
        _ => 0,
    }
}

/// The smallest JSON a value of `node` serialises to (`SchemaDeclType`'s
/// `MinSerializedSize`, with apiserver `pkg/cel/types.go`'s `MinStringSize` 2,
/// `MinBoolSize` 4, `MinNumberSize` 1, `MinDurationSizeJSON` 3, `JSONDateSize` 12,
/// `MinDatetimeSizeJSON` 21).
fn min_serialized_size(node: &Value) -> u64 {
    if int_or_string(node) {
        return 1;
    }
    match ty(node) {
        Some("array") => 2,
        Some("object") => {
            if additional(node).is_some() {
                return 2;
            }
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let props = node.get("properties").and_then(Value::as_object);
            2 + props.into_iter().flatten().fold(0u64, |acc, (name, p)| {
                if required.contains(&name.as_str()) && p.get("default").is_none() {
                    acc.saturating_add(name.len() as u64 + min_serialized_size(p) + 4)
                } else {
                    acc
                }
            })
        }
        Some("string") => match node.get("format").and_then(Value::as_str) {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        },
        Some("boolean") => 4,
        _ => 1,
    }
}

/// `MaxCardinality`: how many values of `node` at most fit in one request.
fn max_cardinality(node: &Value) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_serialized_size(node) + 1)
}

/// A lower bound of the API server's estimated cost of `program` on values of `node`.
pub(crate) fn estimate(program: &IdedExpr, node: &Value) -> u64 {
    let mut w = Walk {
        estimate: true,
        vars: vec![("self".to_string(), Shape::Schema(node))],
        accus: Vec::new(),
        outer_accus: &[],
    };
    w.cost(program)
}

/// `getCostErrorMessage` (apiextensions-apiserver `validation.go`): how far over.
pub(crate) fn exceeds_message(description: &str, cost: u64, limit: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // a ratio shown with one decimal at most
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor > 10.0 {
        format!("{factor:.0}x")
    } else if factor > 1.0 {
        format!("{factor:.1}x")
    } else {
        format!("{factor:.2}x")
    };
    format!(
        "{description} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// A rule of a CRD whose estimated cost is over the API server's limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CostViolation {
    /// The field path in the CRD (`spec.versions[0].schema.openAPIV3Schema...rule`).
    pub(crate) path: String,
    /// The API server's words.
    pub(crate) message: String,
}

/// The rules of a CRD (`apiextensions.k8s.io/v1`) that the API server's cost estimate
/// rejects, and each version whose rules' total is over the CRD limit.
pub(crate) fn crd_violations(
    crd: &Value,
    compile: &dyn Fn(&str) -> Option<IdedExpr>,
) -> Vec<CostViolation> {
    let mut out = Vec::new();
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for (i, v) in versions.enumerate() {
        let Some(schema) = v.pointer("/schema/openAPIV3Schema") else {
            continue;
        };
        let root = format!("spec.versions[{i}].schema.openAPIV3Schema");
        let mut total = 0u64;
        schema_violations(schema, &root, 1, compile, &mut total, &mut out);
        if total > STATIC_ESTIMATED_CRD_COST_LIMIT {
            out.push(CostViolation {
                path: root,
                message: format!(
                    "Forbidden: {}",
                    exceeds_message(
                        "x-kubernetes-validations estimated rule & messageExpression cost total \
                         for entire OpenAPIv3 schema",
                        total,
                        STATIC_ESTIMATED_CRD_COST_LIMIT
                    )
                ),
            });
        }
    }
    out
}

fn schema_violations(
    node: &Value,
    path: &str,
    cardinality: u64,
    compile: &dyn Fn(&str) -> Option<IdedExpr>,
    total: &mut u64,
    out: &mut Vec<CostViolation>,
) {
    if !node.is_object() {
        return;
    }
    let rules = node
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for (j, rule) in rules.enumerate() {
        let Some(source) = rule.get("rule").and_then(Value::as_str) else {
            continue;
        };
        let Some(program) = compile(source) else {
            continue;
        };
        let cost = estimate(&program, node);
        *total = total.saturating_add(cost.saturating_mul(cardinality));
        if cost > STATIC_ESTIMATED_COST_LIMIT {
            out.push(CostViolation {
                path: format!("{path}.x-kubernetes-validations[{j}].rule"),
                message: format!(
                    "Forbidden: {}",
                    exceeds_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT)
                ),
            });
        }
    }
    // How many times a rule of a child can run: the parent's count times the child's list
    // or map size, at most as many as fit in a request.
    let child_cardinality = |child: &Value, times: u64| {
        cardinality
            .saturating_mul(times)
            .min(max_cardinality(child))
            .max(1)
    };
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            schema_violations(
                p,
                &format!("{path}.properties[{name}]"),
                cardinality,
                compile,
                total,
                out,
            );
        }
    }
    if let Some(items) = node.get("items") {
        let n = max_elements(node);
        schema_violations(
            items,
            &format!("{path}.items"),
            child_cardinality(items, n),
            compile,
            total,
            out,
        );
    }
    if let Some(a) = additional(node) {
        let n = max_elements(node);
        schema_violations(
            a,
            &format!("{path}.additionalProperties"),
            child_cardinality(a, n),
            compile,
            total,
            out,
        );
    }
}
