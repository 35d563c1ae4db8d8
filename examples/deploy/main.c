/* Runs the MLP that export_mlp.py exported, through the library's C ABI:
 * no Python, no dlc, no LLVM. Prints one line per row of the output.
 *
 *   cc main.c -I OUT_DIR OUT_DIR/mlp.so -Wl,-rpath,OUT_DIR -o mlp && ./mlp 3
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlp.h"

int main(int argc, char **argv) {
  int batch = argc > 1 ? atoi(argv[1]) : 2;
  if (batch <= 0) {
    fprintf(stderr, "usage: %s BATCH (a positive number)\n", argv[0]);
    return 2;
  }
  float *x = malloc(sizeof(float) * batch * 16);
  for (int i = 0; i < batch * 16; ++i)
    x[i] = (float)sin((double)i);

  dlc_tensor input = {.data = x, .dtype = DLC_FLOAT32, .rank = 2, .shape = {batch, 16}};
  dlc_tensor output;
  if (dlc_mlp(&input, &output) != 0) {
    fprintf(stderr, "dlc_mlp failed: %s\n", dlc_last_error());
    return 1;
  }
  const float *y = output.data;
  for (int64_t i = 0; i < output.shape[0]; ++i) {
    for (int64_t j = 0; j < output.shape[1]; ++j)
      printf("%s%.9g", j ? " " : "", y[i * output.shape[1] + j]);
    printf("\n");
  }
  dlc_free_tensor(&output);

  /* A wrong input is an error with a message, not a crash. */
  input.shape[1] = 15;
  if (dlc_mlp(&input, &output) == 0) {
    fprintf(stderr, "a wrong shape was accepted\n");
    return 1;
  }
  fprintf(stderr, "as expected: %s\n", dlc_last_error());
  free(x);
  return 0;
}
