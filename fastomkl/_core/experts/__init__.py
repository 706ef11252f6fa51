"""Expert banks: one online learner per kernel on its representation (OGD, VAW, kernel expansions,
Nystrom and exact AWV forecasters, the bandit experts, the functional gradients of doubly
stochastic gradients and NORMA, ...)."""
