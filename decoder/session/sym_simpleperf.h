/*
 * sym_simpleperf.h - the symbol tables a simpleperf recording carries per
 * binary (features FILE and FILE2), given to the machine as each object's
 * recorded symbols (rb_machine_set_recorded_symbols).
 */
#ifndef RB_SYM_SIMPLEPERF_H
#define RB_SYM_SIMPLEPERF_H

#include "perfdata/pd.h"
#include "machine.h"

/*
 * Give @m a table per binary of @r's FILE (or FILE2) feature. Returns the
 * number of tables given, or -ENOMEM. A malformed entry ends the walk: the
 * tables before it are given, and @err says which feature and offset
 * (err->code PD_ERR_FEATURE; 0 when the feature was whole or absent).
 */
int rb_sp_symbols_load(struct rb_machine *m, const struct pd_reader *r, struct pd_error *err);
/* The same for one payload of feature @feat (PD_FEAT_SP_FILE or PD_FEAT_SP_FILE2) at file offset @base. */
int rb_sp_symbols_from(struct rb_machine *m, unsigned feat, const uint8_t *data, size_t size, uint64_t base,
		       struct pd_error *err);

#endif
