// workpart::nn_compiled: the layers of <workpart/nn/pool.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/pool.hpp>

namespace workpart::nn {
WORKPART_NN_POOL_INSTANCES(, float)
WORKPART_NN_POOL_INSTANCES(, double)
}  // namespace workpart::nn
