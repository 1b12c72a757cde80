// workpart::nn_compiled: the layers of <workpart/nn/loss.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/loss.hpp>

namespace workpart::nn {
WORKPART_NN_LOSS_INSTANCES(, float)
WORKPART_NN_LOSS_INSTANCES(, double)
}  // namespace workpart::nn
