"""Combiners: which experts run each round, how their predictions mix, and how the mixture learns
(Hedge, graph feedback, bandit samplers, budget mixtures, second-level meta-learners, and the
direct reading of experts that are a model's outputs)."""
