// workpart::nn_compiled: the layers of <workpart/nn/concat.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/concat.hpp>

namespace workpart::nn {
WORKPART_NN_CONCAT_INSTANCES(, float)
WORKPART_NN_CONCAT_INSTANCES(, double)
}  // namespace workpart::nn
