// workpart::nn_compiled: the layers of <workpart/nn/residual.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/residual.hpp>

namespace workpart::nn {
WORKPART_NN_RESIDUAL_INSTANCES(, float)
WORKPART_NN_RESIDUAL_INSTANCES(, double)
}  // namespace workpart::nn
