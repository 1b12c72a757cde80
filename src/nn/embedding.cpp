// workpart::nn_compiled: the layers of <workpart/nn/embedding.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/embedding.hpp>

namespace workpart::nn {
WORKPART_NN_EMBEDDING_INSTANCES(, float)
WORKPART_NN_EMBEDDING_INSTANCES(, double)
}  // namespace workpart::nn
