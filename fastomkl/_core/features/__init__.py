"""Feature banks: x -> one representation z_k per kernel (random Fourier features, Taylor features,
fixed embeddings, and the seed-regenerated blocks of doubly stochastic gradients)."""
