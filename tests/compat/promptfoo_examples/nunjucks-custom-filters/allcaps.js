// written for evalrun's corpus (not copied): the filter the example's allcaps.js defines
module.exports = (str) => String(str).toUpperCase();
