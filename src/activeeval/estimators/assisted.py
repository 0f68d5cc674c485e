"""Model-assisted (difference) estimation of generalized risks — beyond the thesis.

The thesis's estimator (eq. 3.31) uses the model only to choose q. The model's predictive
distribution also gives, for every pool instance, the conditional expectations

    m_N(x) = E_model[w ℓ | x],   m_D(x) = E_model[w | x]

whose pool averages μ_N, μ_D are known without labels. Only the residuals between truth and
model need labels. With a control-variate coefficient λ,

    N̂ = λ μ_N + Σ_i v_i (w_i ℓ_i − λ m_N(x_i)) / Σ_i v_i
    D̂ = λ μ_D + Σ_i v_i (w_i − λ m_D(x_i)) / Σ_i v_i           Ĝ = N̂ / D̂,

v_i = p(x_i)/q(x_i). λ = 0 is exactly the thesis's self-normalized estimator; λ = 1 is the
classical difference estimator of survey sampling (Särndal, Swensson & Wretman, 1992, Ch. 6).
Parts of w that the model knows exactly (the predicted-positive indicator of an F-measure)
have zero residual, so they are used exactly.

Domain. The means Σ v x / Σ v estimate means over the region q samples. Where q vanishes on
part of the pool — allowed only where w ≡ 0 for every label, e.g. q* for precision on the
predicted negatives — they estimate means *given* that region, while μ_N, μ_D average over the
whole pool: Ĝ would be off by the factor P(region) in the control-variate term (precision of
0.75 estimated as 2.1 on a pool with 2% predicted positives). So the estimator works on the
domain D where some compared model's w can be positive: rows drawn outside D (all of whose
terms are 0) are dropped and μ_N, μ_D are taken under p renormalized on D. G is the same ratio
on D, since every term vanishes off it; where D is the whole pool nothing changes.

Variance. Linearizing N̂/D̂ around (N, D): Ĝ − G ≈ Σ_i u_i with

    u_i = v_i (z_i − z̄) / (D Σ_j v_j),   z_i = w_i(ℓ_i − G) − λ (m_N(x_i) − G m_D(x_i)),

z̄ the v-weighted mean of z (the pool terms λ(μ_N − G μ_D) are constants). The sandwich
variance is Σ u_i², and the λ that minimizes it is the weighted regression coefficient

    λ* = Σ v_i² (a_i − ā)(b_i − b̄) / Σ v_i² (b_i − b̄)²,   a = w(ℓ − G),  b = m_N − G m_D,

clipped to [0, 1] ("power tuning", as PPI++ does for prediction-powered inference; Angelopoulos
et al., 2023). A model whose probabilities carry no information gets λ̂ ≈ 0 and the estimator
falls back to SNIS; λ is estimated on the same sample, which adds an O(1/n) bias like any
ratio estimator's.

Standard error. For ratio measures the linearization above drops the curvature of N̂/D̂,
and with few instances of positive weight in the sample (a rare class at 50–100 labels) the
sandwich falls well short of the true spread. The default standard error uses Berger &
Skinner's (2005) jackknife for unequal-probability samples instead: ε_i = (1 − v_i/Σv)·
(Ĝ − Ĝ₍ᵢ₎), Ĝ₍ᵢ₎ the estimate with row i deleted (same λ, same weights; vectorized, O(n)),
in place of u_i in the same combination (Σ (ε − ε̄)² with replacement, Hájek's form below
without). For a linear statistic ε_i = u_i exactly, so means of losses are unchanged.
``variance="linearized"`` keeps Lemma 3.4's sandwich. When deleting one row would at least
halve D̂ (that row carries half the denominator, e.g. the only labeled positive of an F1 at
20 labels), Ĝ₍ᵢ₎ is no small perturbation and ε can be arbitrarily large (a review found a
standard error of 131 for an F1); such a sample gets the linearized influences, for every
model of a comparison. The standard error of a bias-corrected estimate is that of the plain
ratio. Measured (same campaigns, both standard errors): a simulated 4.7%-positive pool, F1
at 50 labels, 2,000 campaigns: true SD 0.133, mean linearized SE 0.086, jackknife 0.133;
95% coverage 0.87 → 0.91. The F1 difference of logistic regression and gradient boosting on
Default (comparison q, 600 campaigns): coverage 0.745 → 0.793 at 100 labels, 0.885 → 0.917
at 200, 0.938 → 0.957 at 400. Single-model F1 on the real tasks
(``docs/results/model_assisted.md``, 1,000 repetitions) at 50 labels: email 0.929 → 0.952,
Default 0.938 → 0.957, Caravan 0.912 → 0.918; from 100 labels on it errs on the conservative
side (Caravan at 100: 0.946 → 0.962), every cell at n ≥ 200 within 0.940–0.962.

Ratio bias. Multiplying N̂ and D̂ by Σ v shows Ĝ = X/Y exactly, X = Σ v (λμ_N + wℓ − λm_N),
Y = Σ v (λμ_D + w − λm_D): a ratio of two linear estimators with E[Y] = D (per unit of
Σ v), so like every ratio estimator it has an O(1/n) bias,

    E[Ĝ] − G ≈ (G·Var(Y) − Cov(X, Y)) / D²

(second-order Taylor expansion of X/Y about (N, D); Cochran, 1977, Sec. 6.8). Writing it
through N̂ and D̂ instead would also need their own O(1/n) biases as self-normalized means,
which vanish only for uniform q. For an F-measure on a skewed pool the bias is not small: on
Caravan (F1 = 0.047) about 0.02 at 50 labels, half the standard deviation. The default
estimate subtracts its plug-in estimate, with Var(Y) and Cov(X, Y) from the same design
influences as the standard error (Beale's correction in survey sampling). For means of losses
(w ≡ 1, m_D ≡ 1) Y is Σ v times a constant and the only term left is the self-normalization's
own; measured negligible (email error rate at 50 labels: bias −0.0011 before, −0.0012
after), so they are left as they are and only ratio measures change. The expansion assumes
draws from one q: a batch-adaptive campaign (q recalibrated between batches) does not use it,
since there it made the estimate worse (email F1, 200 labels: bias +0.0015 → −0.0081).
``bias_correction=False`` gives the plain estimator. Measured on the benchmark tasks
(``docs/results/model_assisted.md``, 1,000 repetitions, same draws): Caravan F1 MAE
0.0406 → 0.0339 at 50 labels, 0.0207 → 0.0182 at 100, 0.0119 → 0.0110 at 200, coverage
0.886 → 0.912 at 50; the three other F1 settings −3 % … +1 % (Default F1 at 100: 0.0744 →
0.0733). The first version of this correction used Var(D̂) and Cov(N̂, D̂), i.e. it left
out the self-normalization terms; it did as well on Caravan and up to 3 % worse elsewhere.
Comparisons do not use it by default: on the difference of two F1 values (Default, logistic
vs gradient boosting, comparison q, 1,000 paired campaigns, jackknife standard error) it
removed most of the bias of Δ̂ (+0.034 → +0.019 at 100 labels, +0.0104 → +0.0011 at 200,
+0.0027 → −0.0003 at 400) at equal MAE, but the interval for Δ covered less often
(0.805 → 0.781, 0.914 → 0.904, 0.946 → 0.934; paired differences 2–5 Monte-Carlo SE; with
the linearized standard error the same: 0.765 → 0.739 … 0.931 → 0.913): the correction's own
noise is not in the standard error, and for a test the interval is what counts.

Comparisons. Δ̂ = Ĝ_A − Ĝ_B, each Ĝ_j the estimator above; both models' control variates
come from the same distributions of p(y | x), so that Var[Δ̂] is that of the *differences* of
their residuals, and λ is tuned for the difference (λ* regresses Δa = a_A − a_B on Δb). Which
distribution? The thesis's mixture of the models (eq. 5.11) is symmetric: where the models
disagree each is confident of its own prediction, and the mixture's predicted loss
difference averages the two beliefs to about zero — for squared loss and Gaussian models
exactly zero, (f_B − f_A)(2E[y] − f_A − f_B) with E[y] = (f_A + f_B)/2. So each model's own
predictive distribution is a control variate of its own, m = Σ_s λ_s m^s over the sources
s ∈ {A, B}, with λ ∈ [0, 1]² minimizing the sandwich variance of Δ̂: a least-squares
regression of v(Δa − Δā) on the v(Δb^s − Δb̄^s) with box constraints (the vector form of
the power tuning above; λ_A = λ_B = λ/2 is the mixture at coefficient λ). The labels decide
whose beliefs predict the actual differences. For k models the k distributions are the
sources and one λ serves every model, pooled over the pairs as for one coefficient.
Measured on the comparison issue's pairs (comparison q of Thm 5.1): the best possible λ
(fitted on the whole pool's true labels) leaves SD(Δ̂) ÷ SD(SNIS) at 0.97–1.00 with the
mixture on all five pairs, and at 0.82 (email error rate), 0.94 (email F1), 0.62 (Default
error rate), 0.88 (Default F1) and 0.82 (diamonds MSE) with the two models' own
distributions. In 1,000 campaigns (finite-population form, same draws;
``docs/results/model_assisted.md``) the MAE of Δ̂ ÷ the mixture's at 50 / 100 / 200 labels:
email error rate 0.73 / 0.76 / 0.82, email F1 0.99 / 0.99 / 1.01, Default error rate
0.42 / 0.44 / 0.46, diamonds MSE 0.86 / 0.84 / 0.84; Default F1 (a separate run, 1,000
campaigns) 0.87 / 0.92 / 0.94.
Standard error. λ is fitted on the sample whose variance it minimizes, so with λ held fixed
the jackknife is too small exactly where λ overfits: an independent review measured
coverage 0.929 with tuned λ against 0.964 with λ fixed at its Monte-Carlo mean (error rate,
100 labels, 2,000 campaigns), and 3.6 points lost on three models. So with several sources
the jackknife re-tunes λ without the deleted row — one step, from the final round's
regression without that row's terms: coefficients at a bound stay there, the free ones are
re-solved and clipped to [0, 1] (:func:`_refit_jackknife`; vectorized, O(n S³)). Coverage
at 50 / 100 / 200 labels (1,000 campaigns, same draws) went from 0.928 / 0.949 / 0.937 to
0.939 / 0.958 / 0.938 (email error rate) and from 0.944 / 0.949 / 0.930 to
0.954 / 0.954 / 0.937 (Default error rate); with uniform draws on diamonds, where
squared-error differences are heavy-tailed, from 0.60 / 0.55 / 0.44 to 0.74 / 0.73 / 0.74
(passive: 0.80 / 0.76 / 0.65).
The gain comes from the instances where the models disagree: there a model's own
distribution predicts who is right, and the residual of a good prediction is a rare event
(the confident model was wrong), whose Wald interval needs many such instances. With
uniform draws on Default (1.7% of the pool disagreements, 1,000 campaigns) the interval
covered 0.81 at 400 labels (about 7 disagreements labeled; the mixture 0.94), 0.89 at 800
and 0.94 from about 30 disagreements on. So the models' own distributions are used once at
least :data:`MIN_DISAGREEMENTS` = 30 distinct labeled instances have predictions that differ
between some pair of models, and the mixture before. Choosing the sources from the sample
shrinks Δ̂ slightly toward 0 while the count of disagreements is near the threshold (the
review measured +0.0003 on Δ = −0.0078, 0.15 SD, uniform draws at 1,600 labels on a pool with
1.8% disagreements; none under the null, where both choices are unbiased), so it costs a
little power, not size. The comparison q puts most of its mass on
disagreements (87% on email), so an active campaign switches within its first 35–50
labels; a passive one on models that rarely disagree keeps the mixture. A fixed ``power``
keeps the mixture (eq. 5.11) at that coefficient.

Pool features (beyond the model). The model's m_N, m_D are one prediction of each
instance's loss; labeled instances *near* an unlabeled one are another, which the model does
not use: near-duplicates (the same e-mail sent twice) share their label, and a region where
the model is miscalibrated shows it in its labeled residuals. Given the pool's features x
(``features=``, one row per instance), a second control variate smooths the labeled residuals
r_i = (w_i ℓ_i − m_N(x_i), w_i − m_D(x_i)) over the pool,

    s(x) = Σ_{i ≠ x} K(x, x_i) r_i / (Σ_{i ≠ x} K(x, x_i) + κ),

K Gaussian with bandwidth h (:data:`DEFAULT_BANDWIDTH` on features standardized to mean 0 and
variance 1), κ = 1 a pseudo-count that keeps s near 0 (the model) where few labeled neighbours
are near. Two random points of d standardized features lie about sqrt(2d) apart, so with
h = 0.3 and d ≳ 10 only near-duplicates count as neighbours (an independent review measured
the pool mean of W/(W + 1), W = Σ K, at 0.93 / 0.37 / 0.03 / 0.00 for d = 1 / 3 / 5 / 10
Gaussian features and 100 labels): exactly what pays on the e-mail pool (20 features, 39
exact duplicates), nothing elsewhere. For smooth neighbourhoods in many dimensions pass a few
components (e.g. PCA) or a larger ``bandwidth``. A labeled instance never smooths its own
residual (the sum skips i = x), so its control variate does not contain its own label: the
leave-one-out principle of the LOOP estimator (Wu & Gagnon-Bartsch, 2018) and of
cross-fitting in prediction-powered inference. Both variates enter as sources of the vector
power tuning above, m + λ_s s with (λ, λ_s) ∈ [0, 1]² fitted by the box-constrained
regression (the same as a comparison's sources): where the features carry nothing beyond the
model, λ_s ≈ 0 and the estimate is the one without features (its standard error differs
slightly, by the jackknife re-tuning λ; features with no variance take the path without
features exactly); where they do, Var[Ĝ] shrinks by the share of the residual variance that
the neighbours predict.
Groups. The sums run only over labeled instances with the same point predictions as x
(:func:`_prediction_groups`: a classifier's predicted class; for several models the tuple of
their predicted classes, or for continuous predictions which models predict equal values).
A residual that is zero whatever the label then stays zero — a difference where the models
agree, an F-measure's w·ℓ − m_N on the predicted negatives — and a neighbour across the
decision boundary, whose loss is the opposite event, does not count.
Comparisons. Each model's residuals under the mixture of the models (eq. 5.11) are smoothed,
and that source enters the vector power tuning beside the models' own distributions, with
its coefficient tuned for the differences; the jackknife deletes each row from it as above.
The groups matter most here: without them, on the e-mail error-rate pair (comparison q, 300
campaigns of 100 labels) features raised the MAE of Δ̂ 1.66-fold and the interval covered
0.79, since labeled disagreements smoothed a nonzero residual difference onto agreeing
neighbours, where it is 0 for every label, and only the rare agreement draws could correct
it; with them the MAE fell to 0.63 of the estimate without features (coverage 0.947 against
0.950), and on single models the groups changed the MAE by −1.5% … +0.1% (e-mail error rate,
F1 and naive Bayes, 100–800 labels, same draws). A known limit: where the models disagree
on a few tight clusters only (an independent review's simulated pool of 40 clusters, the
models disagreeing on 6, 16% of the pool), the interval with features covered 0.906 / 0.927
at 50 / 100 labels under the comparison q (2,000 campaigns; without features 0.934 / 0.953)
and 0.90–0.92 with uniform draws up to 200 labels, while the MAE fell to 0.45–0.52 of the
estimate without features: with few labeled units per cluster, Δ̂ is skewed (its standard
error has the right size, SD ÷ mean SE 0.96–0.98, but the t-statistic's 2.5% and 97.5%
quantiles were −3.03 and 1.59). A larger pseudo-count does not cure it: on that pool
(another 800 campaigns, the same draws for each κ) κ = 1 / 2 / 4 covered 0.899 / 0.900 /
0.916 at 50 labels and 0.932 / 0.929 / 0.938 at 100, while κ = 2 / 4 cost 0–3% / 1–7% of
the MAE on the e-mail error rate (100–400 labels); the misses are samples that saw no rare
residual of a disagreeing cluster, which no statistic of that sample reveals (these
alternatives: ``benchmarks/assisted_alternatives.py``).
Standard error. Row i's label enters its neighbours' s as well as its own term, so the
jackknife deletes it from both: it re-tunes (λ, λ_s) without row i, as for comparisons, and
replaces s by s₍ᵢ₎ ≈ s − ∂s/∂δ_i, δ_i unit i's weight in the smoother (an infinitesimal
jackknife for that part; :func:`_smoothed`). Measured on a simulated pool of tight clusters
with nearly pure labels (1,500 instances, error rate, 100 labels, 400–1,000 campaigns):
holding s fixed, the interval covered 0.913–0.936; deleting unit i from s exactly, 0.95–0.98,
the standard error 1.15–1.28 times the true spread (with one or two labeled neighbours,
deleting one halves the smoother's shrinkage, a nonlinearity the jackknife overstates);
with the derivative, SD ÷ mean SE 0.99 (uniform q) and 0.89 (q*). On the e-mail pool
(1,000 campaigns, q*, 100–400 labels) SD ÷ SE is 0.98–1.04 with features, 0.96–1.06
without. The finite-population form only: with draws as rows (batch-adaptive q) a row is
not a unit, and s is held fixed. Cost: O(m·n·d) for the kernel, in blocks of bounded
memory, with exp only on the entries within reach; measured (``make bench``) 10 s for 10⁶
instances with 20 features and 800 labels (18 s before exp was limited to them; 0.1 s
without features), so under 2 minutes on 10⁷. ``Session.trajectory(features=)`` smooths all
its points but the last in one pass (:func:`_smoothed_nested`): 60 points on 10⁵ instances
with 500 labels took 3.1 s, against 0.67 s for one estimate (42 s before, point by point). On the
benchmark tasks
(``docs/results/model_assisted.md``, 1,000 campaigns, q*, same draws) the MAE with features
÷ without, at 50 / 100 / 200 / 400 / 800 labels: e-mail error rate 0.95 / 0.92 / 0.87 /
0.85 / 0.81 and F1 0.96 / 0.91 / 0.87 / 0.86 / 0.86 (the near-duplicates), e-mail naive
Bayes error rate 0.96 / 0.95 / 0.90 / 0.85 / 0.78; Default (3 features), Caravan (85) and
diamonds (9) 0.99–1.00, where the model's own probabilities already carry what the features
know. Coverage 0.946–0.964 on the e-mail rows, 0.924 for naive Bayes at 50 labels. The
model pairs (``compare(..., features=X)``, comparison q, same draws): the difference of the
e-mail error rates 0.69 / 0.63 / 0.58 at 50 / 100 / 200 labels (exact from 400 on: every
disagreement labeled), of the e-mail F1 0.73 / 0.69 / 0.70 / 0.94 / 0.93, coverage
0.929–0.955 and 0.932–0.955 (without features 0.938–0.958 and 0.918–0.953); Default's
error rates and diamonds' MSE 0.99–1.01. Measured alternatives (300 campaigns, q*, 100 /
200 / 400 labels, MAE ÷ h = 0.3 on the e-mail error rate): h = 0.15 1.00–1.01, h = 0.6
1.01–1.04, h = 1.0 1.03–1.10, so :data:`DEFAULT_BANDWIDTH` stays. The model's own logits as
the only feature (a cross-fitted recalibration of m_N, m_D; ``logits`` in
``benchmarks/assisted_alternatives.py``) gave 0.99–1.02 of the estimate
without features at 100 / 200 labels on the logistic rows (e-mail error rate and F1,
Default F1) and 0.91–0.92 on the naive-Bayes error rate: where the model is calibrated,
recalibrating it adds nothing.

Optimal sampling (the analogue of Thm 4.1). For λ = 1 and a model that is right in
expectation, E[z | x] = 0, so the asymptotic variance is E_p[(p/q)·Var_y[w(ℓ − G) | x]]/D²
and the Lagrangian argument of Thm 4.1 / Lemma 4.2 gives

    q(x) ∝ p(x) · sqrt( Var_y[w(ℓ − Ǧ) | x] / λ(x) ),
    Var_y[w(ℓ − c) | x] = E[w²(ℓ − c)² | x] − (m_N(x) − c m_D(x))²,

a conditional *variance* where Thm 4.1 has a second moment. It vanishes where the model is
certain, so the floor (here: on the model's certainty, via the measure's 0/1 moment at the
floor) and the defensive mixture of :mod:`activeeval.sampling` are essential; they are applied
the same way. Measured (``docs/results/model_assisted.md``, 1,000 campaigns, MAE ÷ the
default's on q*, 50–800 labels): with its floor this q is 0.96–1.43 (1.32–1.43 on Default's
error rate: it spends labels on confident instances the floor declares uncertain); without a
floor and with a 5% mix, 0.81–0.96 on the calibrated error rates (e-mail, Default) but
1.10–1.21 on Caravan F1 and 1.30–1.90 with coverage 0.81–0.87 up to 400 labels on the
naive-Bayes error rate, whose confident mistakes it leaves to the mix. A floor at the
measure's own scale, Var_y + (Ǧ m_D)² (what the second moment of Thm 4.1 keeps where the
model is certain and right, without its (m_N − Ǧ m_D)² where the model expects a loss), was
no better (``benchmarks/assisted_alternatives.py floor``, 400 campaigns, 100–400
labels): with mix 0.1, 0.92–1.10 of q* on e-mail, Default and diamonds, 1.10–1.21 on the
naive-Bayes error rate, 1.22–1.28 on Caravan F1; with mix 0.05, 0.91–1.10 and 1.17–1.30.
Nor is power tuning the gap: on the same draws a fixed λ (0.5 … 1.0) was at best 0.6% below
the tuned one (e-mail error rate, Default F1; 500 campaigns). So ``evaluate``'s default
stays q* (Thm 4.1), never far from the best of them.

How far any estimator can go on the model's probabilities. If they are right, no
design-unbiased estimator (to first order for ratio measures) can be expected to have an MSE
below V = min_π Σ (1/π_i − 1)·p_i²·Var_y[w(ℓ − Ǧ) | x_i]/D̄² with n distinct labels
(Godambe & Joshi, 1965), reached at the inclusion probabilities π_i = min(1,
k·p_i·sqrt(Var_y[…])), which the variance q above without floor or mix approximates, by the
difference estimator with λ = 1.
``reproduce.assisted.model_limit`` (outside the package) computes √V and the same design's RMSE on
the pool's labels (a calibration check); ``docs/results/model_assisted.md``, "How far the
model's probabilities can take any estimator", sets both beside the measured default and
the best peer. Measured (1,000 campaigns, 100–800 labels): the default's RMSE is 1.02–1.15
of √V where the pool's labels agree with the model within 15% (e-mail error rate up to 400
labels, Default error rate, diamonds, Default naive-Bayes F1; 1.54 at 800 on e-mail, the
finite-pool end), 0.95–0.98 on Default F1, whose labels are 9–10% easier than the model
expects, 0.47–0.67 on Caravan F1 (36–46% easier), and 1.39–1.74 on the e-mail F1, whose
labels are 16–35% harder (covariate shift). √V itself is 0.89 of the best peer's RMSE on
the e-mail error rate at 100 labels and 0.94 / 0.93 of the best peer's MAE (as normal
errors) on Default F1 at 100 / 200: there a target of 0.85 × the best peer is beyond what
these probabilities allow any such estimator, and only information beyond them (the pool's
features) goes further.

Finite pools. Algorithm 2 draws with replacement but pays only for new labels, so a budget
of n labels buys n *distinct* instances, and an instance drawn twice says nothing new. The
with-replacement estimator above counts it twice and, at n/m of a third or more, is markedly
worse than a simple random sample of the same n labels (whose variance carries the factor
1 − n/m). With ``pool_q`` (what :func:`~activeeval.evaluate` and
:func:`~activeeval.compare` pass for a static q) the estimator uses each distinct labeled
instance once, as a sample without replacement:

* Design. Embed the draws in a Poisson process of rate one; instance i first appears at time
  E_i/q_i with E_i ~ Exp(1) independent, so the n distinct instances are the n smallest
  E_i/q_i — an order sample (successive sampling; Rosén, 1972, 1997) with inclusion
  probabilities π_i ≈ 1 − exp(−q_i t), Σ π_i = n
  (:func:`~activeeval.sampling.inclusion_probabilities`). For uniform q it is exact and the
  sample is a simple random sample.
* Estimator. The same N̂/D̂ with v_i = p(x_i)/π_i over the distinct instances (the Hájek
  form of the difference estimator: Σ_S (p/π)(wℓ − λ m_N) / Σ_S p/π + λ μ_N estimates the
  pool total of the residual, Särndal et al., 1992, eq. 6.3.1 and Sec. 5.7).
* Variance. The same influences (u_i, or the jackknife's ε_i), combined by Hájek's
  approximation for high-entropy fixed-size designs: V̂ = Σ_S (1 − π_i)(u_i − Â)²,
  Â = Σ (1 − π)u / Σ (1 − π) (Deville & Tillé, 2005). Instances with π = 1 are known
  exactly and add no variance; a census gives V̂ = 0. λ* is the same regression with these
  weights.

On the benchmark tasks this lowered the MAE at every budget, most at large n/m (email error
rate at 800 of 1,295 labels: 0.0045 → 0.0029; email F1: 0.0137 → 0.0074), with coverage
0.93–0.96 from 200 labels on (``docs/results/model_assisted.md``, 1,000 repetitions). Under a
cost budget the approximate π ignore that an expensive instance is slightly less likely to
fit the remaining budget when it arrives: an O(1/n) relative error, like the ratio
estimator's own bias (measured: F1 with log-normal costs, 1,000 campaigns, the same bias as
the with-replacement form, 2.2 vs 2.3 MC-SE, and stderr matching the spread, 0.0336 vs
0.0334). A batch-adaptive campaign changes q between batches, so it keeps the
with-replacement form, which holds for any sequence of q's.

The draws stay q*'s. π = 1 − exp(−q t) is concave in q, so at large n/m the distinct labels
fall short of the without-replacement optimum's form, π ∝ σ capped at 1 (Godambe–Joshi,
above), with q* in place of σ. Drawing from q' ∝ −log(1 − min(0.999, k q*)) makes the π at
one budget n exactly that. Measured (``benchmarks/assisted_alternatives.py targeted``,
2,000 campaigns, q' for 800 labels), MAE ÷ q*'s at 100 / 200 / 400 / 800 labels: e-mail
error rate 1.13 / 1.04 / 0.97 / 0.82 and F1 1.11 / 1.13 / 1.11 / 0.79 (800 of 1,295
instances), Default F1 1.10 / 1.05 / 1.00 / 0.96, diamonds 1.10 / 1.05 / 1.03 / 0.99,
naive-Bayes e-mail 1.13 / 1.14 / 1.07 / 0.97, Caravan F1 1.13 / 1.16 / 1.11 / 1.05;
coverage at 100 labels 0.874 against 0.932 on the e-mail error rate. The gain is at the
budget alone; before it the capped instances crowd out the rest, and a session's trajectory
or a sequential comparison reports every n.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from .._validation import (
    check_costs,
    check_level,
    check_option,
    check_safeguards,
)
from ..errors import (
    ActiveEvalWarning,
    InvalidSamplingDistributionError,
    ShapeError,
    UndefinedEstimateWarning,
)
from ..measures import Measure, get_measure
from ..methods import VARIANCE_METHODS
from ..predictive import Categorical, Mixture, Predictive, as_predictive, check_labels
from ..sampling import (
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    _defensive,
    _from_moment,
    _pool_distribution,
    _successive_time,
    check_distribution,
)
from .inference import (
    Comparison,
    Estimate,
    MultipleComparison,
    _difference,
    _multiple_from_influence,
    _rounding_zero,
    _wald_p_value,
    _warn_undefined,
    importance_weights,
)
from .smoother import (
    _BATCH,
    DEFAULT_BANDWIDTH,
    _check_bandwidth,
    _smoothed,
    _standardized,
)

__all__ = [
    "AssistedEstimate",
    "assisted_distribution",
    "assisted_estimate",
    "assisted_multiple_comparison",
    "assisted_paired_test",
]


@dataclass(frozen=True)
class _Pool:
    """The model's conditional expectations over the pool and their p-weighted means."""

    m_num: NDArray[np.float64]
    m_den: NDArray[np.float64]
    mu_num: float
    mu_den: float


def _pool_moments(
    measure: Measure, predictive: Predictive, prediction: NDArray[Any], p: NDArray[np.float64]
) -> _Pool:
    m_num, m_den = measure.conditional_expectations(predictive, prediction)
    return _Pool(m_num, m_den, float(p @ m_num), float(p @ m_den))


@dataclass(frozen=True, repr=False)
class AssistedEstimate(Estimate):
    """An :class:`~activeeval.estimators.inference.Estimate` from the model-assisted estimator, with
    the control-variate coefficient that was used (0 = the thesis's SNIS estimator), whether
    it is the finite-population form (one row per distinct labeled instance) and, with pool
    features, the coefficient λ_s of the smoothed residuals (module docstring, "Pool
    features"; None without features). A census (every instance with test mass labeled, or,
    in :func:`~activeeval.evaluate` and a session, every instance that can move the measure)
    reports the exact value with both coefficients 0: no control variate is used."""

    power: float = 1.0
    finite: bool = False
    feature_power: float | None = None

    @property
    def _rows(self) -> int:
        return self.n_labels if self.finite else self.n_draws

    _REPR_LINES: ClassVar[tuple[tuple[str, ...], ...]] = (
        *Estimate._REPR_LINES,
        ("power", "finite", "feature_power"),
    )


def _assisted_parts(
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    mn: NDArray[np.float64],
    md: NDArray[np.float64],
    pool: _Pool,
    coef: float,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Ĝ for a given λ, and per-draw a = w(ℓ − Ĝ), b = m_N − Ĝ m_D and the denominator D̂;
    all NaN when no row has test mass (Σ v = 0: nothing to estimate from)."""
    sv = v.sum()
    if not sv > 0:
        return math.nan, np.full(v.shape, math.nan), np.full(v.shape, math.nan), np.asarray(0.0)
    num = coef * pool.mu_num + float(v @ (wl - coef * mn)) / sv
    den = coef * pool.mu_den + float(v @ (w - coef * md)) / sv
    g = num / den if den > 0 else math.nan
    return g, wl - g * w, mn - g * md, np.asarray(den)


def _influence(v: NDArray[np.float64], z: NDArray[np.float64], den: float) -> NDArray[np.float64]:
    """u_i = v_i (z_i − z̄) / (D̂ Σ v) — the linearized influence of Ĝ (module docstring)."""
    sv = v.sum()
    zbar = float(v @ z) / sv
    return v * (z - zbar) / (den * sv)


def _denominator_terms(
    w: NDArray[np.float64], md: NDArray[np.float64], coef: float
) -> NDArray[np.float64] | None:
    """The rows' terms w − λ m_D of D̂, or None when they are all equal: then D̂ is a constant
    and Ĝ linear in one weighted mean (means of losses, rankings), with no ratio bias and
    no curvature for the jackknife to add; also None without rows."""
    rd = w - coef * md
    return rd if rd.size and np.any(rd != rd[0]) else None


def _jackknife_influence(
    v: NDArray[np.float64],
    terms: tuple[Any, ...],
    coef: float,
    linear: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
) -> NDArray[np.float64] | None:
    """Per-row influences of Ĝ for its standard error (module docstring, "Standard error").

    Means of losses (w − λ m_D constant over the rows): Ĝ is linear in the weighted mean, and
    ``linear`` (:func:`_influence`) is returned. Ratio measures: Berger & Skinner's (2005)
    jackknife influences ε_i = (1 − v_i/Σv)(Ĝ − Ĝ₍ᵢ₎), Ĝ₍ᵢ₎ the estimate without row i at the
    same λ and weights, centred for draws with replacement (a design with ``fpc`` centres
    itself). For a linear statistic ε_i equals the linearized influence exactly; for N̂/D̂ it
    keeps the curvature the linearization drops. None when the jackknife does not apply:
    Ĝ undefined, or deleting some row would leave D̂₍ᵢ₎ ≤ D̂/2 (that row carries half the
    denominator, e.g. the only labeled positive of an F1, and Ĝ₍ᵢ₎ is not a small
    perturbation: ε can then be arbitrarily large); the caller uses ``linear`` instead."""
    wl, w, mn, md, pool = terms
    rd = _denominator_terms(w, md, coef)
    if rd is None:
        return linear
    sv = v.sum()
    xn = v * (wl - coef * mn)
    xd = v * rd
    rest = sv - v
    den = coef * pool.mu_den + float(xd.sum()) / sv if sv > 0 else math.nan
    if not den > 0:
        return None
    num = coef * pool.mu_num + float(xn.sum()) / sv
    with np.errstate(divide="ignore", invalid="ignore"):
        den_i = coef * pool.mu_den + (xd.sum() - xd) / rest
        g_i = (coef * pool.mu_num + (xn.sum() - xn) / rest) / den_i
        eps = (num / den - g_i) * rest / sv
    if not np.all((den_i > 0.5 * den) & np.isfinite(eps)):
        return None
    return eps - eps.mean() if fpc is None else eps


def _tuned_power(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    fpc: NDArray[np.float64] | None = None,
) -> float:
    """λ* = Σ α β / Σ β², α = v(a − ā), β = v(b − b̄) (λ* = Σ v²(a − ā)(b − b̄) / Σ v²(b − b̄)²
    for draws with replacement), clipped to [0, 1]: the λ that minimizes the sandwich variance
    of Σ v(z − z̄), z = a − λ b, with Ĝ and D̂ held fixed. For a without-replacement sample
    (``fpc`` = 1 − π per row) α and β go through the same finite-population transform as the
    influences (:func:`_design_influence`). ``a`` and ``b`` are (n,) or (n, P): with P columns
    (pairwise differences of models) each column is centred on its own v-weighted mean and the
    sums run over all columns."""
    return float(_tuned_powers(v, a, [b], fpc)[0])


def _tuned_powers(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    bs: Sequence[NDArray[np.float64]],
    fpc: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """:func:`_tuned_power` for several control variates z = a − Σ_s λ_s b_s: the λ ∈ [0, 1]^S
    minimizing Σ (α − Σ_s λ_s β_s)² — a least-squares regression of α on the β_s with box
    constraints (bounded-variable least squares; for one control variate the clipped ratio).
    A control variate whose β vanishes (e.g. equal for every model of a difference) gets
    λ = 0."""
    return _box_least_squares(*_power_regression(v, a, bs, fpc))


def _power_regression(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    bs: Sequence[NDArray[np.float64]],
    fpc: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The rows of :func:`_tuned_powers`' regression: α (n, P) and β (n, P, S), each column
    centred on its v-weighted mean and through the design's transform; ``a`` and the ``bs``
    are (n,) or (n, P)."""
    n = v.shape[0]
    sv = v.sum()
    vv = v if a.ndim == 1 else v[:, None]

    def centred(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return _design_influence(vv * (x - (v @ x) / sv), fpc).reshape(n, -1)

    return centred(a), np.stack([centred(b) for b in bs], axis=-1)


def _box_least_squares(
    alpha: NDArray[np.float64], beta: NDArray[np.float64]
) -> NDArray[np.float64]:
    """argmin over λ ∈ [0, 1]^S of Σ (α − β λ)² for α (n, P), β (n, P, S); λ_s = 0 for a
    column that vanishes. Where the minimizer is not unique — collinear sources, e.g. squared
    loss under two Gaussian models, where E_A[ℓ_A − ℓ_B | x] = −E_B[ℓ_A − ℓ_B | x], so only
    λ_A − λ_B is identified — a ridge of 1e-10 of the mean column norm picks the smallest λ
    (the bounded solver alone returned both coefficients positive in 41 of 200 such cases,
    so each model's own estimate carried an arbitrary control-variate weight); elsewhere it
    moves λ by about 1e-10."""
    y = alpha.ravel()
    x = beta.reshape(-1, beta.shape[-1])
    coef = np.zeros(x.shape[1])
    norms = np.einsum("ij,ij->j", x, x)
    live = norms > 0
    if live.sum() == 1:
        j = int(np.flatnonzero(live)[0])
        coef[j] = np.clip(float(y @ x[:, j]) / norms[j], 0.0, 1.0)
    elif live.any():
        k = int(live.sum())
        ridge = np.sqrt(1e-10 * norms[live].mean()) * np.eye(k)
        fit = optimize.lsq_linear(
            np.vstack([x[:, live], ridge]), np.r_[y, np.zeros(k)], bounds=(0.0, 1.0), method="bvls"
        )
        coef[live] = np.clip(fit.x, 0.0, 1.0)
    return coef


def _refit_jackknife(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[Any]],
    coef: NDArray[np.float64],
    rows: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    fpc: NDArray[np.float64] | None,
    dropped: Sequence[Any] | None = None,
) -> NDArray[np.float64] | None:
    """Jackknife influences (n, k) of every model's estimate with the coefficients re-tuned
    without the deleted row (module docstring, "Comparisons"): ε_i = (1 − v_i/Σv)(Ĝ − Ĝ₍ᵢ₎)
    as in :func:`_jackknife_influence`, but Ĝ₍ᵢ₎ at λ₍ᵢ₎, the regression of the final round
    (``rows`` = α, β of :func:`_power_regression`) refitted without row i's terms — one
    step: the coefficients at a bound stay there, the others are re-solved and clipped to
    [0, 1]. Fitting λ on the sample whose standard error it then minimizes makes that
    standard error too small exactly where λ overfits; deleting a row with its influence
    on λ puts that variability back. ``rows`` None (a given ``power``): λ stays. A source
    whose control variate depends on the labels (the smoothed residuals, module docstring
    "Pool features") has per source and model in ``dropped`` the arrays of
    :func:`_smoother_source` for deleting row i from it too. None where the plain jackknife
    does not apply (a row carrying half a denominator)."""
    n, s_count = v.shape[0], coef.shape[0]
    coef_i = np.tile(coef, (n, 1))
    free = np.flatnonzero((coef > 0.0) & (coef < 1.0))
    if rows is not None and free.size:
        alpha, beta = rows
        fixed = np.setdiff1d(np.arange(s_count), free)
        own = np.einsum("ips,ipt->ist", beta, beta)  # row i's share of the Gram matrix
        gram = own.sum(axis=0)[None] - own
        cross = np.einsum("ips,ip->s", beta, alpha)[None] - np.einsum("ips,ip->is", beta, alpha)
        rhs = cross[:, free] - gram[:, free][:, :, fixed] @ coef[fixed]
        step = np.einsum("ist,it->is", np.linalg.pinv(gram[:, free][:, :, free]), rhs)
        coef_i[:, free] = np.clip(step, 0.0, 1.0)
    drops = [None] * s_count if dropped is None else list(dropped)
    sv = v.sum()
    rest = sv - v
    if not np.all(rest > 0):
        return None
    eps = np.empty((n, len(by_source[0])))
    for j, (wl, w, _mn, _md, _pool) in enumerate(by_source[0]):
        mn = np.stack([src[j][2] for src in by_source], axis=1)
        md = np.stack([src[j][3] for src in by_source], axis=1)
        mu_n = np.array([src[j][4].mu_num for src in by_source])
        mu_d = np.array([src[j][4].mu_den for src in by_source])
        tn, td = v @ mn, v @ md
        num = coef @ mu_n + (v @ wl - coef @ tn) / sv
        den = coef @ mu_d + (v @ w - coef @ td) / sv
        # Without row i: the pool means and Σ_{j≠i} v_j m_j of every source, (n, S).
        mu_ni, mu_di = np.tile(mu_n, (n, 1)), np.tile(mu_d, (n, 1))
        tn_i, td_i = tn[None] - v[:, None] * mn, td[None] - v[:, None] * md
        for src, drop in enumerate(drops):
            if drop is not None:
                mu_ni[:, src], mu_di[:, src], tn_i[:, src], td_i[:, src] = drop[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            num_i = np.sum(coef_i * mu_ni, 1) + (v @ wl - v * wl - np.sum(coef_i * tn_i, 1)) / rest
            den_i = np.sum(coef_i * mu_di, 1) + (v @ w - v * w - np.sum(coef_i * td_i, 1)) / rest
            eps[:, j] = (num / den - num_i / den_i) * rest / sv
        if not (den > 0 and np.all(den_i > 0.5 * den) and np.all(np.isfinite(eps[:, j]))):
            return None
    return eps - eps.mean(axis=0) if fpc is None else eps


def _ratio_bias(
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    mn: NDArray[np.float64],
    md: NDArray[np.float64],
    pool: _Pool,
    coef: float,
    g: float,
    den: float,
    fpc: NDArray[np.float64] | None,
) -> float:
    """Estimated second-order bias of Ĝ (module docstring, "Ratio bias"). Ĝ = X/Y exactly,
    with X = Σ v (λμ_N + w ℓ − λ m_N) and Y = Σ v (λμ_D + w − λ m_D) (multiply N̂ and D̂ by
    Σ v), a ratio of two linear estimators; its bias is (G·Var(Y) − Cov(X, Y)) / E[Y]²,
    estimated with Var and Cov from the design influences of X and Y (as the standard error)
    and returned as (Ĝ·V̂ − Ĉ)/Y² in the scale of Σ v = 1. Zero when w and m_D are constant
    over the rows (means of losses, rankings): there only the self-normalization's own O(1/n)
    term remains, measured negligible (module docstring)."""
    rd = _denominator_terms(w, md, coef)
    if rd is None:
        return 0.0
    sv = v.sum()
    ty = v * (coef * pool.mu_den + rd) / sv
    tx = v * (coef * pool.mu_num + wl - coef * mn) / sv
    if fpc is None:  # i.i.d. draws: centre on the mean (a design with fpc centres itself)
        ty, tx = ty - ty.mean(), tx - tx.mean()
    uy = _design_influence(ty, fpc)
    ux = _design_influence(tx, fpc)
    return float((g * (uy @ uy) - ux @ uy) / den**2)


def _debiased(
    g: float,
    v: NDArray[np.float64],
    terms: tuple[Any, ...],
    coef: float,
    den: float,
    fpc: NDArray[np.float64] | None,
    binary_loss: bool,
) -> float:
    """Ĝ minus its estimated ratio bias (:func:`_ratio_bias`). For a 0/1 loss the correction
    does not carry Ĝ out of [0, 1] (G is a w-weighted mean of losses, so it cannot leave
    their range); an estimate already outside (the difference estimator's residual term can
    do that) is left where it is, not clipped, so that it stays unbiased."""
    if math.isnan(g):
        return g
    wl, w, mn, md, pool = terms
    out = g - _ratio_bias(v, wl, w, mn, md, pool, coef, g, den, fpc)
    return min(max(out, min(g, 0.0)), max(g, 1.0)) if binary_loss else out


def _design_influence(
    u: NDArray[np.float64], fpc: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """Influences ũ with Σ ũ² (and Σ ũ_j ũ_k) the variance (covariance) estimate of the design.

    With replacement (``fpc`` None) the sandwich Σ u² of Lemma 3.4: ũ = u. For the distinct
    instances of a successive sample (one row each, u_i = y_i/π_i with y_i the instance's
    linearized term), Hájek's variance approximation for high-entropy fixed-size designs
    (Hájek, 1964; Deville & Tillé, 2005, eq. 8 without their n/(n − 1), matching Lemma 3.4's
    plug-in convention): V̂ = Σ c_i (u_i − Â)², c_i = 1 − π_i, Â = Σ c u / Σ c. Instances
    labeled with certainty (π = 1) contribute nothing; with all π = 1 (a census) V̂ = 0.
    For a simple random sample (π = n/m) it is the textbook (1 − n/m)·Σ(u − ū)².
    """
    if fpc is None:
        return u
    sc = float(fpc.sum())
    if not sc > 0:
        return np.zeros_like(u)
    centred = u - (fpc @ u) / sc
    root = np.sqrt(fpc)
    return (root if u.ndim == 1 else root[:, None]) * centred


def _successive_rows(
    draws: NDArray[np.intp], q: NDArray[np.float64], p: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """The rows of the finite-population estimator for draws i.i.d. from the pool
    distribution ``q`` (module docstring, "Finite pools"): the position in ``draws`` of each
    distinct instance's first draw, its weight v = p/π and c = 1 − π, with π the successive
    sample's inclusion probabilities (:func:`~activeeval.sampling.inclusion_probabilities`)."""
    units, first = np.unique(draws, return_index=True)
    t = _successive_time(q, units.shape[0])  # q validated by the caller
    pi = np.ones(units.shape[0]) if math.isinf(t) else -np.expm1(-q[units] * t)
    return first, p[units] / pi, 1.0 - pi


def _smoother_source(
    z: NDArray[np.float64],
    parts: Sequence[_Terms],
    rows: NDArray[np.intp],
    p: NDArray[np.float64],
    bandwidth: float,
    v: NDArray[np.float64] | None = None,
    groups: NDArray[np.intp] | None = None,
) -> tuple[list[_Terms], list[Any] | None]:
    """The control-variate source of the smoothed residuals (module docstring, "Pool
    features"): for each model's terms (w·ℓ, w, m_N, m_D, pool) at the pool instances
    ``rows``, the smoother of its residuals w·ℓ − m_N and w − m_D at the rows, within the
    ``groups`` of :func:`_prediction_groups`, with pool means
    under ``p`` (the test distribution on the domain). Repeated rows of one instance (draws
    with replacement) are one labeled unit. With the rows' weights ``v`` (the
    finite-population form only: distinct rows), also per model the jackknife's arrays for
    deleting row i from the sample and the smoother (:func:`_smoothed`): the pool means of
    s₍ᵢ₎ for m_N and m_D and Σ_{j ≠ i} v_j s₍ᵢ₎ at the rows, each (n,); else None (s held
    fixed)."""
    units, first, inv = np.unique(rows, return_index=True, return_inverse=True)
    resid = np.column_stack(
        [c for wl, w, mn, md, _ in parts for c in ((wl - mn)[first], (w - md)[first])]
    )
    vu = None if v is None else v[first]
    batch = _BATCH.get()
    hit = None if batch is None else batch.smooth(z, units, resid, p, bandwidth, vu, groups)
    mean, at, dropped = hit or _smoothed(z, units, resid, p, bandwidth, vu, groups)
    empty = np.empty(0)
    terms: list[_Terms] = [
        (
            wl,
            w,
            at[inv, 2 * j],
            at[inv, 2 * j + 1],
            _Pool(empty, empty, float(mean[2 * j]), float(mean[2 * j + 1])),
        )
        for j, (wl, w, *_rest) in enumerate(parts)
    ]
    if dropped is None:
        return terms, None
    mu_i, t_i = dropped[0][inv], dropped[1][inv]
    return terms, [
        (mu_i[:, 2 * j], mu_i[:, 2 * j + 1], t_i[:, 2 * j], t_i[:, 2 * j + 1])
        for j in range(len(parts))
    ]


def _with_smoother(
    z: NDArray[np.float64] | None,
    by_source: Sequence[Sequence[_Terms]],
    reference: Sequence[_Terms],
    rows: NDArray[np.intp],
    p: NDArray[np.float64],
    bandwidth: float,
    v: NDArray[np.float64],
    groups: NDArray[np.intp] | None,
    fpc: NDArray[np.float64] | None,
) -> tuple[list[Sequence[_Terms]], list[Any] | None]:
    """The control-variate sources with the smoothed residuals of ``reference`` (the terms of
    one model of p(y | x), per compared model) appended as the last source, and the
    jackknife's deletion arrays per source (None for the model sources; module docstring,
    "Pool features"; for the smoother too with draws as rows, ``fpc`` None: s held fixed);
    the sources unchanged and None without usable features (none given, or every column
    constant)."""
    if z is None or z.shape[1] == 0:
        return list(by_source), None
    vu = None if fpc is None else v
    smooth, dropped = _smoother_source(z, reference, rows, p, bandwidth, vu, groups)
    return [*by_source, smooth], [None] * len(by_source) + [dropped]


def _collapses(pr: Predictive) -> bool:
    """Whether ``pr`` is a mixture of classifiers (a Categorical in disguise)."""
    return isinstance(pr, Mixture) and pr.collapse() is not None


def _prediction_groups(
    preds: Sequence[Predictive], predictions: Sequence[NDArray[Any]]
) -> NDArray[np.intp] | None:
    """The smoother's groups (module docstring, "Pool features"): a labeled instance smooths
    only instances with the same point predictions — for classifiers the tuple of the
    models' predicted classes, for continuous predictions which models predict equal values
    (for one model, one group: None). A residual that is zero whatever the label (a
    difference where the models agree; an F-measure's w·ℓ − m_N on predicted negatives) then
    stays zero, and a neighbour across a decision boundary, whose loss is the opposite
    event, does not count. A mixture of classifiers counts as a classifier."""
    if all(isinstance(pr, Categorical) or _collapses(pr) for pr in preds):
        keys = np.column_stack([np.unique(f, return_inverse=True)[1] for f in predictions])
    else:
        k = len(predictions)
        keys = np.column_stack(
            [predictions[a] == predictions[b] for a in range(k) for b in range(a + 1, k)]
            or [np.zeros(predictions[0].shape[0], dtype=bool)]
        ).astype(np.intp)
    # One code per distinct row of keys. Rows of small codes are numbers in a mixed radix
    # (a 1-D unique; the row-wise unique, axis=0, sorts rows and is far slower on big pools).
    radix = [int(r) + 1 for r in keys.max(axis=0, initial=0)]
    if math.prod(radix) < 2**62:  # exact in int64
        place = np.cumprod([1, *radix[:0:-1]], dtype=np.int64)[::-1]
        codes = np.unique(keys.astype(np.int64) @ place, return_inverse=True)[1].reshape(-1)
    else:
        codes = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    return codes if codes.max(initial=0) > 0 else None


def _check_power(power: float) -> float:
    if not 0.0 <= float(power) <= 1.0:
        raise ShapeError(f"power: the control-variate coefficient must lie in [0, 1], got {power}.")
    return float(power)


def _check_variance(variance: str) -> bool:
    """True for the jackknife standard error (module docstring, "Standard error")."""
    return check_option(variance, VARIANCE_METHODS, "variance") == "jackknife"


def _check_draws(indices: ArrayLike, labels: ArrayLike, pred: Predictive) -> tuple[Any, Any]:
    """Pool indices of the draws (integers in [0, m)) and their labels, equal length, n ≥ 1,
    the labels in the model's label space (finite numbers for a regression model)."""
    idx = np.asarray(indices)
    y = np.asarray(labels)
    m = pred.n
    if idx.ndim != 1 or y.shape != idx.shape or idx.size == 0:
        raise ShapeError("indices, labels: need two non-empty 1-d arrays of equal length.")
    if not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= m:
        raise ShapeError(f"indices: must be integer pool indices in [0, {m}).")
    return idx, check_labels(pred, y)


def assisted_estimate(
    measure: Measure | str,
    predictive: Any,
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    power: float | None = None,
    level: float = 0.95,
    pos_label: Any = None,
    pool_q: ArrayLike | None = None,
    bias_correction: bool = True,
    variance: str = "jackknife",
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> AssistedEstimate:
    """Model-assisted estimate of a generalized risk from labeled draws (module docstring).

    Parameters
    ----------
    measure : Measure or str
    predictive : Predictive or (m, K) array
        The model's predictive distribution over the WHOLE pool (the control variate needs
        every instance).
    indices : array-like of shape (n,)
        Pool indices of the draws, in draw order (repeats included).
    labels : array-like of shape (n,)
        True label of each draw.
    q : array-like of shape (n,), optional
        Sampling probability of each draw; None for uniform draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool; uniform by default.
    power : float, optional
        Control-variate coefficient λ ∈ [0, 1]; None tunes it on the sample (power tuning).
    pool_q : array-like of shape (m,), optional
        The whole-pool distribution the draws came from, instead of ``q``. The estimator then
        treats the distinct labeled instances as the finite-population sample they are
        (module docstring, "Finite pools"): each counted once with weight p/π, and the
        variance carries the finite-population factor 1 − π. Recommended whenever q is static;
        it is what :func:`~activeeval.evaluate` uses.
    bias_correction : bool, default True
        Subtract the ratio estimator's estimated second-order bias (module docstring,
        "Ratio bias"). It changes only ratio measures (F-measures, precision, recall); means
        of losses are left as they are (their remaining O(1/n) term, the self-normalization's,
        is negligible). False gives the plain difference estimator.
    variance : {"jackknife", "linearized"}
        Standard error from Berger & Skinner's jackknife influences (default) or from the
        linearized ones (Lemma 3.4's sandwich; module docstring, "Standard error"). The two
        are identical for means of losses without ``features``; with them the linearized
        one holds the smoother fixed and is too small (a review measured coverage 0.88–0.89
        against the jackknife's 0.92 on a simulated pair of 100–200 labels).
    features : array-like of shape (m, d), optional
        The pool's features, numeric. The labeled residuals, kernel-smoothed over them, are a
        second control variate with its own tuned coefficient (module docstring, "Pool
        features"); it helps where near neighbours share labels the model gets wrong.
    bandwidth : float
        The smoother's Gaussian kernel bandwidth in standardized feature units.
    """
    pred = as_predictive(predictive)
    meas = get_measure(measure, pos_label=pos_label).bind(pred)
    lv = check_level(level)
    idx, y = _check_draws(indices, labels, pred)
    p = _pool_distribution(pred.n, pool_weights)
    f = pred.point_prediction()
    rows = _rows(idx, q, pool_q, p)
    dom, p_dom = _domain(meas, [f], p, pool_q)
    pos, v, fpc = _in_domain(dom, idx, rows)
    ir, yr = idx[pos], y[pos]
    pool = _pool_moments(meas, pred, f, p_dom)
    w = meas.weight(f[ir], yr)
    wl = w * meas.loss(f[ir], yr)
    jk = _check_variance(variance)
    z = None if features is None else _standardized(features, pred.n)
    h = _check_bandwidth(bandwidth)
    if z is None or z.shape[1] == 0:  # no features, or only constant ones: nothing to smooth
        terms = (wl, w, pool.m_num[ir], pool.m_den[ir], pool)
        a = _estimate_from_terms(v, terms, power, idx, lv, meas, fpc, bias_correction, jk)
        if z is not None:
            a = replace(a, feature_power=0.0)
    else:
        base = [(wl, w, pool.m_num[ir], pool.m_den[ir], pool)]
        groups = _prediction_groups([pred], [f])
        by_source, dropped = _with_smoother(z, [base], base, ir, p_dom, h, v, groups, fpc)
        a = _estimate_from_sources(
            v, by_source, power, idx, lv, meas, fpc, bias_correction, jk, dropped
        )
    if fpc is not None and not np.any(fpc > 0) and np.isin(np.flatnonzero(p_dom > 0), ir).all():
        # Every instance with test mass labeled: v = p, so Ĝ is the exact pool value (the
        # control variate cancels) with stderr 0 — a point interval, as evaluate's census.
        a = _as_assisted_census(a, features)
    return a


def _as_assisted_census(est: Estimate, features: ArrayLike | None = None) -> AssistedEstimate:
    """A census under the model-assisted estimator, as that estimator reports it (from
    :func:`assisted_estimate` or a campaign's exact value): the exact value needs no control
    variate, so both coefficients are 0 (feature_power None without features)."""
    base = {k: v for k, v in vars(est).items() if k not in ("power", "finite", "feature_power")}
    fp = None if features is None else 0.0
    return AssistedEstimate(**{**base, "census": True}, power=0.0, finite=True, feature_power=fp)


def _rows(
    idx: NDArray[np.intp], q: ArrayLike | None, pool_q: ArrayLike | None, p: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64] | None]:
    """Positions in the draws of the estimator's rows, their weights v, and 1 − π (None for
    draws with replacement: every draw is a row with v = p/q)."""
    m = p.shape[0]
    if pool_q is None:
        v = importance_weights(q, p[idx] * m, n=idx.shape[0])
        return np.arange(idx.shape[0]), v, None
    if q is not None:
        raise ShapeError(
            "q, pool_q: pass either the per-draw probabilities q or the pool distribution "
            "pool_q, not both."
        )
    qq = check_distribution(pool_q, "pool_q", m)
    if (qq[idx] <= 0).any():
        bad = int(idx[np.flatnonzero(qq[idx] <= 0)[0]])
        raise InvalidSamplingDistributionError(
            f"pool_q: is zero at pool instance {bad}, which was drawn; pass the distribution "
            "the draws came from."
        )
    return _successive_rows(idx, qq, p)


def _domain(
    meas: Measure,
    predictions: Sequence[NDArray[Any]],
    p: NDArray[np.float64],
    pool_q: ArrayLike | None = None,
    stacklevel: int = 3,
) -> tuple[NDArray[np.bool_] | None, NDArray[np.float64]]:
    """The domain D where some model's weight w can be positive (module docstring,
    "Domain") — None when it is the whole pool — and the test distribution renormalized on D
    for the pool moments. Every term (wℓ, w, m_N, m_D) vanishes off D, so G is the same
    ratio on D; but the self-normalized means over the rows estimate means *given the support
    of q*, so the control variate's pool means must be taken over the same region — over the
    whole pool they were off by the factor P(D) wherever q vanishes off D (precision: q* is
    zero on predicted negatives). A ``pool_q`` that vanishes somewhere in D where p > 0
    leaves those instances out of every estimate, which is then not consistent: warned about
    (as ``mix=0`` is), not refused. The rows are restricted by :func:`_in_domain`."""
    dom = np.zeros(p.shape[0], dtype=bool)
    for f in predictions:
        dom |= np.asarray(meas.weight_can_be_positive(f), dtype=bool)
    if pool_q is not None:
        missing = int(np.count_nonzero(dom & (p > 0) & (np.asarray(pool_q, dtype=float) <= 0)))
        if missing:
            warnings.warn(
                f"pool_q: is zero on {missing} instances with test mass whose weight can be "
                "positive; estimates ignore them and are not consistent for the whole pool. "
                "Mix q with the pool distribution.",
                ActiveEvalWarning,
                stacklevel=stacklevel,
            )
    if dom.all():
        return None, p
    mass = float(p @ dom)
    return dom, (np.where(dom, p, 0.0) / mass if mass > 0 else p)


def _in_domain(
    dom: NDArray[np.bool_] | None,
    idx: NDArray[np.intp],
    rows: tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64] | None],
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64] | None]:
    """The rows (positions in ``idx``, v, 1 − π) drawn in the domain :func:`_domain` found;
    rows outside it have all terms 0 and are dropped."""
    if dom is None:
        return rows
    pos, v, fpc = rows
    keep = dom[idx[pos]]
    return pos[keep], v[keep], None if fpc is None else fpc[keep]


def _estimate_from_terms(
    v: NDArray[np.float64],
    terms: _Terms,
    power: float | None,
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    fpc: NDArray[np.float64] | None = None,
    bias_correction: bool = True,
    jackknife: bool = True,
) -> AssistedEstimate:
    """The model-assisted estimate from importance weights v and per-row ``terms`` (w·ℓ, w,
    the control variates m_N, m_D and their pool moments; any per-row value with a known pool
    expectation, e.g. a ranking's per-query ℓ with w ≡ 1). Rows are the draws (``fpc``
    None), or the distinct labeled instances of a successive sample with ``fpc`` = 1 − π
    (:func:`_successive_rows`); ``idx`` are all draws, for the counts."""
    wl, w, mn, md, pool = terms
    coef = _choose_power(power, v, wl, w, mn, md, pool, fpc)
    g, a, b, den = _assisted_parts(v, wl, w, mn, md, pool, coef)
    if bias_correction:
        g = _debiased(g, v, (wl, w, mn, md, pool), coef, float(den), fpc, meas.binary_loss)
    se = math.nan
    if not _undefined(g, meas):
        u = _influence(v, a - coef * b, float(den))
        if jackknife:
            jk = _jackknife_influence(v, (wl, w, mn, md, pool), coef, u, fpc)
            u = u if jk is None else jk
        u = _design_influence(u, fpc)
        se = float(math.sqrt(u @ u))
    return _single_result(g, se, v, w, idx, level, meas, coef, fpc)


def _undefined(g: float, meas: Measure) -> bool:
    """Whether Ĝ is NaN, with the warning that says why."""
    if math.isnan(g):
        warnings.warn(
            f"{meas.name}: the model-assisted estimate is undefined (no labeled instance has "
            "test mass p > 0, or D̂ ≤ 0, e.g. precision before any predicted positive); "
            "returning NaN. Label more instances.",
            UndefinedEstimateWarning,
            stacklevel=4,
        )
        return True
    return False


def _single_result(
    g: float,
    se: float,
    v: NDArray[np.float64],
    w: NDArray[np.float64],
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    coef: float,
    fpc: NDArray[np.float64] | None,
    feature_power: float | None = None,
) -> AssistedEstimate:
    vw = v * w
    n_eff = float(vw.sum() ** 2 / (vw @ vw)) if (vw @ vw) > 0 else 0.0
    return AssistedEstimate(
        estimate=g,
        stderr=se,
        n_draws=int(idx.shape[0]),
        n_labels=int(np.unique(idx).size),
        effective_n=n_eff,
        binary_loss=meas.binary_loss,
        level=level,
        measure=meas.name,
        unit_weights=meas.unit_weights,
        power=coef,
        finite=fpc is not None,
        feature_power=feature_power,
    )


def _estimate_from_sources(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    power: float | None,
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    fpc: NDArray[np.float64] | None,
    bias_correction: bool,
    jackknife: bool,
    dropped: Sequence[Any] | None = None,
) -> AssistedEstimate:
    """One model's estimate with its own control variate and the smoothed residuals as two
    sources (module docstring, "Pool features"): (λ, λ_s) by the box-constrained regression
    of the model's a on both b's, the estimate at Σ_s λ_s m^s, and the jackknife that
    re-tunes both without the deleted row (the comparison machinery with one model)."""
    coef, g, u = _fit_sources(
        v, by_source, power, None, fpc, meas, bias_correction, jackknife, dropped
    )
    se = math.nan
    if not _undefined(float(g[0]), meas):
        u = _design_influence(u[:, 0], fpc)
        se = float(math.sqrt(u @ u))
    w = by_source[0][0][1]
    coef_m, coef_s = float(coef[0]), float(coef[1])
    return _single_result(float(g[0]), se, v, w, idx, level, meas, coef_m, fpc, coef_s)


def _choose_power(
    power: float | None,
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    mn: NDArray[np.float64],
    md: NDArray[np.float64],
    pool: _Pool,
    fpc: NDArray[np.float64] | None = None,
) -> float:
    if power is not None:
        return _check_power(power)
    # Two rounds: λ from the SNIS estimate's residuals, then from the tuned estimate's.
    coef = 0.0
    for _ in range(2):
        g, a, b, _den = _assisted_parts(v, wl, w, mn, md, pool, coef)
        if math.isnan(g):
            return 0.0
        coef = _tuned_power(v, a, b, fpc)
    return coef


def assisted_paired_test(
    measure: Measure | str,
    predictives: Sequence[Any],
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    mixture: Predictive | None = None,
    power: float | None = None,
    level: float = 0.95,
    pos_label: Any = None,
    pool_q: ArrayLike | None = None,
    bias_correction: bool = False,
    variance: str = "jackknife",
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> Comparison:
    """Paired comparison of two models with model-assisted estimates.

    Both models' control variates come from the same distributions of p(y | x), with
    coefficients tuned for the *difference* so that Var[Δ̂] is minimized (module docstring,
    "Comparisons"): each model's own predictive distribution, with λ ∈ [0, 1]² fitted by
    box-constrained least squares, once the sample has :data:`MIN_DISAGREEMENTS` instances
    on which the models' predictions differ; before that, or with a fixed ``power``, the
    mixture of the two models (eq. 5.11) with one λ. A ``mixture`` given here is always the
    one distribution (λ* regresses a₀ − a₁ on b₀ − b₁). ``pool_q``, ``variance``,
    ``features`` and ``bandwidth`` as in :func:`assisted_estimate`; with features, each
    model's labeled residuals under the mixture, smoothed over the pool, are one more source
    with its own coefficient (module docstring, "Pool features"). ``bias_correction=True``
    subtracts each model's estimated ratio bias (:func:`assisted_estimate`); it is off for
    comparisons because there it lowered the coverage of the interval for Δ (module
    docstring, "Ratio bias").
    """
    preds = [as_predictive(pr, f"predictives[{k}]") for k, pr in enumerate(predictives)]
    if len(preds) != 2:
        raise ShapeError(f"predictives: a paired test compares exactly 2 models, got {len(preds)}.")
    mix = Mixture(preds) if mixture is None else mixture
    meas = get_measure(measure, pos_label=pos_label).bind(mix)
    lv = check_level(level)
    idx, y = _check_draws(indices, labels, mix)
    p = _pool_distribution(mix.n, pool_weights)
    jk = _check_variance(variance)
    v, fpc, by_source, dropped = _comparison_rows(
        meas, preds, mix, idx, y, q, pool_q, p, power, features, bandwidth, mixture is not None
    )
    c = _paired_from_terms(v, by_source, power, idx, lv, meas, fpc, bias_correction, jk, dropped)
    return _unused_features(c, features)


def _unused_features(result: Any, features: ArrayLike | None) -> Any:
    """``feature_power`` = 0 where features were given but not used: none varies (nothing
    smoothed), or a census (exact values)."""
    if features is not None and result.feature_power is None:
        return replace(result, feature_power=0.0)
    return result


_Terms = tuple[Any, Any, Any, Any, _Pool]


def _value_pool(expectation: NDArray[np.float64], p: NDArray[np.float64]) -> _Pool:
    """Pool moments of a per-instance value ℓ(x) whose model expectation m(x) is known, with
    w ≡ 1 (a regular risk, e.g. a ranking's per-query DCG/ERR, eq. 6.4)."""
    return _Pool(expectation, np.ones_like(expectation), float(p @ expectation), 1.0)


def _value_terms(values: NDArray[np.float64], pool: _Pool, idx: NDArray[Any]) -> _Terms:
    """The estimator's per-draw terms (w·ℓ, w, m_N, m_D, pool) of such values at draws idx."""
    ones = np.ones(idx.shape[0])
    return values, ones, pool.m_num[idx], ones, pool


def _terms_at(
    v: NDArray[np.float64],
    parts: Sequence[_Terms],
    coef: float,
    debias: tuple[NDArray[np.float64] | None, bool] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """At coefficient λ: every model's estimate (k,), and per draw a/D̂ and b/D̂ (n, k).
    With ``debias`` = (fpc, binary_loss) the estimates are bias-corrected
    (:func:`_debiased`); a and b stay linearized at the plain ratio."""
    k = len(parts)
    g = np.empty(k)
    a = np.empty((v.shape[0], k))
    b = np.empty((v.shape[0], k))
    for j, (wl, w, mn, md, pool) in enumerate(parts):
        g[j], aj, bj, den = _assisted_parts(v, wl, w, mn, md, pool, coef)
        # Ĝ undefined: a, b are NaN already, and NaN/0 warns in some numpy versions.
        d = 1.0 if math.isnan(g[j]) else float(den)
        a[:, j], b[:, j] = aj / d, bj / d
        if debias is not None:
            g[j] = _debiased(float(g[j]), v, (wl, w, mn, md, pool), coef, float(den), *debias)
    return g, a, b


def _model_influences(
    v: NDArray[np.float64],
    parts: Sequence[_Terms],
    coef: float,
    z: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
    jackknife: bool = True,
) -> NDArray[np.float64]:
    """Each model's per-row influences (n, k) from z = (a − λb)/D̂ of :func:`_terms_at`:
    linearized, or jackknife (:func:`_jackknife_influence`); a difference's influences are
    the difference of the columns, exactly (Δ̂₍ᵢ₎ = Ĝ₀₍ᵢ₎ − Ĝ₁₍ᵢ₎). If the jackknife does
    not apply to one model, all get the linearized influences."""
    u = np.column_stack([_influence(v, z[:, j], 1.0) for j in range(z.shape[1])])
    if not jackknife:
        return u
    jk = [_jackknife_influence(v, part, coef, u[:, j], fpc) for j, part in enumerate(parts)]
    cols = [e for e in jk if e is not None]
    if len(cols) < len(jk):  # linearized for every model, so differences stay paired
        return u
    return np.column_stack(cols)


def _combined(by_source: Sequence[Sequence[_Terms]], coef: NDArray[np.float64]) -> list[_Terms]:
    """Every model's terms with the control variate Σ_s λ_s m^s: each source s (a predictive
    distribution of p(y | x)) gives the models' m_N, m_D and their pool means, weighted by
    λ_s; estimates from these terms use coefficient 1. Only the pool *means* enter an
    estimate once the rows are sliced, so the combined pool arrays are left empty."""
    out: list[_Terms] = []
    for j, (wl, w, _mn, _md, _pool) in enumerate(by_source[0]):
        terms = [src[j] for src in by_source]
        mn = sum(float(c) * t[2] for c, t in zip(coef, terms, strict=True))
        md = sum(float(c) * t[3] for c, t in zip(coef, terms, strict=True))
        mu_n = sum(float(c) * t[4].mu_num for c, t in zip(coef, terms, strict=True))
        mu_d = sum(float(c) * t[4].mu_den for c, t in zip(coef, terms, strict=True))
        empty = np.empty(0)
        out.append((wl, w, mn, md, _Pool(empty, empty, float(mu_n), float(mu_d))))
    return out


#: Labeled instances on which the models' predictions differ that a comparison needs before
#: each model's own predictive distribution serves as a control variate (module docstring,
#: "Comparisons"); with fewer, the mixture of the models is the one control variate.
MIN_DISAGREEMENTS = 30


def _sources(
    preds: Sequence[Predictive],
    mix: Predictive,
    predictions: Sequence[NDArray[Any]],
    rows: NDArray[Any],
    power: float | None,
) -> Sequence[Predictive]:
    """The control-variate sources of a comparison (module docstring, "Comparisons"): every
    model's own predictive distribution when λ is tuned and at least
    :data:`MIN_DISAGREEMENTS` labeled rows have predictions that differ between some pair of
    models; otherwise the mixture alone (eq. 5.11), as with a fixed ``power``."""
    if power is not None or _disagreements(predictions, rows) < MIN_DISAGREEMENTS:
        return [mix]
    return preds


def _disagreements(predictions: Sequence[NDArray[Any]], rows: NDArray[Any]) -> int:
    """How many distinct pool instances among ``rows`` get different predictions from some
    pair of models."""
    units = np.unique(rows)
    first = predictions[0][units]
    differ = np.zeros(units.shape[0], dtype=bool)
    for f in predictions[1:]:
        differ |= f[units] != first
    return int(differ.sum())


def _source_powers(
    power: float | None,
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    pairs: tuple[NDArray[np.intp], NDArray[np.intp]] | None,
    fpc: NDArray[np.float64] | None = None,
    smoothers: int = 0,
) -> tuple[NDArray[np.float64], tuple[NDArray[np.float64], NDArray[np.float64]] | None]:
    """The coefficients λ_s of a comparison's control variates (module docstring,
    "Comparisons"): with a given ``power``, λ_s = power/S for each of the S sources (for the
    models' own distributions, the equal mixture of eq. 5.11 at coefficient ``power``);
    otherwise two rounds (from λ = 0) of the box-constrained regression
    :func:`_tuned_powers` of the pairwise differences Δa on the sources' Δb^s, pooled over
    the model pairs ``pairs`` (None for one model: its own a on its b^s), with Ĝ and D̂ of the
    previous round; and the final round's regression rows (None for a given ``power``) for
    :func:`_refit_jackknife`. The last ``smoothers`` sources are smoothed residuals (module
    docstring, "Pool features"), which a given ``power`` weights by ``power`` each."""
    k = len(by_source)
    if power is not None:
        c, models = _check_power(power), k - smoothers
        return np.r_[np.full(models, c / models), np.full(smoothers, c)], None
    coef = np.zeros(k)
    rows = None
    for _ in range(2):
        g, a, den = [], [], []
        for t in _combined(by_source, coef):
            gj, aj, _, dj = _assisted_parts(v, *t, 1.0)
            if math.isnan(gj):  # before dividing by D̂: NaN/0 warns in some numpy versions
                return np.zeros(k), None
            g.append(gj)
            den.append(float(dj))
            a.append(aj / float(dj))
        da = np.column_stack(a)
        db = [
            np.column_stack([(t[2] - g[j] * t[3]) / den[j] for j, t in enumerate(src)])
            for src in by_source
        ]
        if pairs is not None:
            ia, ib = pairs
            da, db = da[:, ia] - da[:, ib], [b[:, ia] - b[:, ib] for b in db]
        rows = _power_regression(v, da, db, fpc)
        coef = _box_least_squares(*rows)
    return coef, rows


def _fit_sources(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    power: float | None,
    pairs: tuple[NDArray[np.intp], NDArray[np.intp]] | None,
    fpc: NDArray[np.float64] | None,
    meas: Measure,
    bias_correction: bool,
    jackknife: bool,
    dropped: Sequence[Any] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The coefficients λ_s of the control-variate sources (:func:`_source_powers`; the last
    source the smoothed residuals when ``dropped`` is given), every model's estimate at
    Σ_s λ_s m^s (k,) and its per-row influences (n, k) before the design's transform
    (:func:`_comparison_influences`; NaN where some estimate is undefined) — one model, a
    pair, or k models."""
    smoothers = 0 if dropped is None else 1
    coef, reg = _source_powers(power, v, by_source, pairs, fpc, smoothers)
    parts = _combined(by_source, coef)
    g, a, b = _terms_at(v, parts, 1.0, (fpc, meas.binary_loss) if bias_correction else None)
    if np.isnan(g).any():  # some Ĝ undefined (e.g. no labeled row in the domain): no SE
        return coef, g, np.full(a.shape, math.nan)
    u = _comparison_influences(v, by_source, coef, reg, parts, a - b, fpc, jackknife, dropped)
    return coef, g, u


def _comparison_influences(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    coef: NDArray[np.float64],
    rows: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    parts: Sequence[_Terms],
    z: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
    jackknife: bool,
    dropped: Sequence[Any] | None = None,
) -> NDArray[np.float64]:
    """Every model's influences (n, k) for a comparison: :func:`_model_influences`, or —
    with several control-variate sources tuned on the sample, or a source that depends on
    the labels (``dropped``, :func:`_refit_jackknife`) — the jackknife that re-tunes them
    and deletes each row from that source too, where it applies."""
    if jackknife and (rows is not None or dropped is not None) and len(by_source) > 1:
        eps = _refit_jackknife(v, by_source, coef, rows, fpc, dropped)
        if eps is not None:
            return eps
    return _model_influences(v, parts, 1.0, z, fpc, jackknife)


def _comparison_rows(
    meas: Measure,
    preds: Sequence[Predictive],
    mix: Predictive,
    idx: NDArray[np.intp],
    y: NDArray[Any],
    q: ArrayLike | None,
    pool_q: ArrayLike | None,
    p: NDArray[np.float64],
    power: float | None,
    features: ArrayLike | None,
    bandwidth: float,
    mixture_given: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None, list[Sequence[_Terms]], Any]:
    """A comparison's rows in the domain — their weights v and 1 − π (None with
    replacement) — and every compared model's terms under each control-variate source
    (:func:`_sources`, or the given ``mix`` alone; :func:`_model_terms`); with pool
    ``features`` the smoothed residuals under the mixture ``mix`` as the last source and the
    jackknife's deletion arrays (:func:`_with_smoother`): the models' difference of
    residuals is smoothed, whichever sources the labels then weight."""
    z = None if features is None else _standardized(features, mix.n)
    h = _check_bandwidth(bandwidth)
    fs = [pr.point_prediction() for pr in preds]
    rows_all = _rows(idx, q, pool_q, p)  # validates pool_q before _domain warns about it
    dom, p_dom = _domain(meas, fs, p, pool_q, stacklevel=4)  # the caller's caller
    pos, v, fpc = _in_domain(dom, idx, rows_all)
    rows, yr = idx[pos], y[pos]
    sources = [mix] if mixture_given else _sources(preds, mix, fs, rows, power)
    by_source: list[Sequence[_Terms]] = [
        _model_terms(meas, preds, src, rows, yr, p_dom) for src in sources
    ]
    if z is None or z.shape[1] == 0:  # nothing to smooth: skip the mixture's terms
        return v, fpc, by_source, None
    ref = by_source[0] if sources[0] is mix else _model_terms(meas, preds, mix, rows, yr, p_dom)
    groups = _prediction_groups(preds, fs)
    return v, fpc, *_with_smoother(z, by_source, ref, rows, p_dom, h, v, groups, fpc)


def _model_terms(
    meas: Measure,
    preds: Sequence[Predictive],
    mix: Predictive,
    idx: NDArray[Any],
    y: NDArray[Any],
    p: NDArray[np.float64],
) -> list[_Terms]:
    """Per model: w·ℓ and w at the draws, the control variates m_N, m_D of ``mix`` (the
    common model of p(y | x)) at the draws, and their pool moments."""
    parts: list[_Terms] = []
    for pr in preds:
        f = pr.point_prediction()
        pool = _pool_moments(meas, mix, f, p)
        w = meas.weight(f[idx], y)
        parts.append((w * meas.loss(f[idx], y), w, pool.m_num[idx], pool.m_den[idx], pool))
    return parts


def _paired_from_terms(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    power: float | None,
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    fpc: NDArray[np.float64] | None = None,
    bias_correction: bool = False,
    jackknife: bool = True,
    dropped: Sequence[Any] | None = None,
) -> Comparison:
    """Paired model-assisted comparison from each model's per-row terms
    (w·ℓ, w, m_N, m_D, pool moments; rows as in :func:`_estimate_from_terms`) under each
    control-variate source, the coefficients tuned for the difference
    (:func:`_source_powers`); the last source the smoothed residuals when ``dropped`` is
    given (:func:`_with_smoother`)."""
    pairs = (np.array([0]), np.array([1]))
    coef, g, u = _fit_sources(
        v, by_source, power, pairs, fpc, meas, bias_correction, jackknife, dropped
    )
    diff = _difference(g[0], g[1])
    own = np.sqrt(np.sum(_design_influence(u, fpc) ** 2, axis=0))  # each model's own
    u = _design_influence(u[:, 0] - u[:, 1], fpc)
    se = _rounding_zero(float(math.sqrt(u @ u)), diff)
    if math.isnan(diff):
        _warn_undefined(meas.name)
        pv = se = math.nan
    elif se == 0.0 and diff != 0.0 and fpc is not None and not fpc.any():
        pv = 0.0  # every labeled unit has π = 1: the difference is known exactly
    else:  # a zero stderr otherwise (e.g. 3 labels, all alike) is degenerate: warned
        pv = _wald_p_value(diff, se, meas.name)
    return Comparison(
        estimates=(float(g[0]), float(g[1])),
        difference=diff,
        stderr=se,
        p_value=pv,
        n_draws=int(idx.shape[0]),
        n_labels=int(np.unique(idx).size),
        greater_is_better=meas.greater_is_better,
        level=level,
        measure=meas.name,
        feature_power=None if dropped is None else float(coef[-1]),
        stderrs=(float(own[0]), float(own[1])),
    )


def assisted_multiple_comparison(
    measure: Measure | str,
    predictives: Sequence[Any],
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    power: float | None = None,
    pos_label: Any = None,
    pool_q: ArrayLike | None = None,
    bias_correction: bool = False,
    variance: str = "jackknife",
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> MultipleComparison:
    """All pairwise comparisons of k ≥ 2 models with model-assisted estimates (thesis
    Sec. 3.2.3 with the estimator of this module).

    The control variates of every model come from the same sources as for
    :func:`assisted_paired_test`: the k models' own predictive distributions once
    :data:`MIN_DISAGREEMENTS` labeled instances get different predictions from some pair of
    models, else (or with a fixed ``power``) the mixture of the k models (eq. 5.11). One
    coefficient vector λ serves all models, so that every pairwise difference is a difference
    of the same estimates; it minimizes the summed sandwich variance of all k(k−1)/2
    differences with Ĝ_j and D̂_j held at the previous round's values (the paired test's
    regression pooled over the pairs; for one source
    Σ_pairs Σ_i v_i²(Δa − Δā)(Δb − Δb̄) / Σ_pairs Σ_i v_i²(Δb − Δb̄)², clipped to [0, 1];
    two rounds, from λ = 0). Since D̂ moves with λ, this is not the exact minimizer of the
    plug-in variance; on F1 the tuned λ still lowered the true (Monte-Carlo) variance of the
    differences below both λ = 0 and λ = 1 in an independent check.
    Model j's influence is u_j = v (z_j − z̄_j) / (D̂_j Σ v), z_j = a_j − Σ_s λ_s b^s_j, and the
    table (Holm, Bonferroni, Tukey) is built from them exactly as for the thesis's estimator.
    ``pool_q``, ``variance``, ``features``, ``bandwidth`` and ``bias_correction`` (off by
    default) as in :func:`assisted_paired_test`.
    """
    preds = [as_predictive(pr, f"predictives[{k}]") for k, pr in enumerate(predictives)]
    k = len(preds)
    if k < 2:
        raise ShapeError(f"predictives: need at least 2 models to compare, got {k}.")
    mix = Mixture(preds)
    meas = get_measure(measure, pos_label=pos_label).bind(mix)
    idx, y = _check_draws(indices, labels, mix)
    p = _pool_distribution(mix.n, pool_weights)
    jk = _check_variance(variance)
    v, fpc, by_source, dropped = _comparison_rows(
        meas, preds, mix, idx, y, q, pool_q, p, power, features, bandwidth
    )
    pairs = np.triu_indices(k, 1)
    coef, g, u = _fit_sources(v, by_source, power, pairs, fpc, meas, bias_correction, jk, dropped)
    u = _design_influence(u, fpc)
    res = _multiple_from_influence(g, u, int(np.unique(idx).size), meas, n_draws=idx.shape[0])
    if dropped is not None:
        res = replace(res, feature_power=float(coef[-1]))
    return _unused_features(res, features)


def _conditional_variance(
    pred: Predictive, meas: Measure, c: float, f: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Var_y[w(ℓ − c) | x] under the predictive distribution (the variance next to Thm 4.1:
    E[w²(ℓ − c)² | x] − (m_N − c·m_D)²), and m_D = E[w | x]."""
    second = meas.conditional_second_moment(pred, c, f)
    m_num, m_den = meas.conditional_expectations(pred, f)
    return np.maximum(second - (m_num - c * m_den) ** 2, 0.0), m_den


def assisted_distribution(
    predictive: Any,
    measure: Measure | str = "error_rate",
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    pos_label: Any = None,
) -> NDArray[np.float64]:
    """Variance-optimal q for the model-assisted estimator: q ∝ p·sqrt(Var_y[w(ℓ−Ǧ)|x]/λ(x))
    (module docstring), with the floor and defensive mixture of
    :func:`~activeeval.sampling.optimal_distribution`.

    The conditional variance is zero where the model is certain; the floor keeps at least
    floor·(1 − floor) of Bernoulli variance on every instance of a 0/1 loss, i.e. the model is
    never trusted beyond certainty 1 − floor.
    """
    pred = as_predictive(predictive)
    meas = get_measure(measure, pos_label=pos_label).bind(pred)
    lam = check_costs(costs, pred.n)
    check_safeguards(mix, floor)
    p = _pool_distribution(pred.n, pool_weights)
    f = pred.point_prediction()
    c = meas.intrinsic_value(pred, f, pool_weights=p)
    mask = meas.weight_can_be_positive(f)
    if math.isnan(c) or not mask.any():
        return _defensive(p, p, mask, 1.0) if mask.any() else p
    var, m_den = _conditional_variance(pred, meas, c, f)
    if meas.binary_loss and floor > 0:
        var = np.maximum(var, floor * (1 - floor) * m_den**2)
    return _from_moment(var, p, mask, lam, mix, meas.regular, uniform=pool_weights is None)
